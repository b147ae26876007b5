import { sandboxInboundOperation } from './inbound.ts';

/** `/v1/sandbox/…`: the sandbox carrier's own operations (API-EXTENSIONS §8). */
export const sandbox = [sandboxInboundOperation];
