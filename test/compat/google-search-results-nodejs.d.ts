/** The part of google-search-results-nodejs 2.1.0 (no bundled types) the client tests call. */
declare module "google-search-results-nodejs" {
  type Callback = (data: unknown) => void;
  class GoogleSearch {
    constructor(apiKey?: string);
    json(parameters: Record<string, unknown>, callback: Callback): void;
    location(q: string, limit: number, callback: Callback): void;
    account(callback: Callback): void;
    search_archive(searchId: string, callback: Callback): void;
  }
  const client: { GoogleSearch: typeof GoogleSearch };
  export default client;
}
