/** Clock injected into stores and the runtime so tests control time without sleeping. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();
