// Global test setup. The Postgres part (finding or starting a server) is added with the Postgres store.
export default async function setup(): Promise<void> {}
