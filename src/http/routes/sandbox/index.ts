import { sandboxInboundOperation } from './inbound.ts';

/** `/v1/sandbox/…`: the sandbox carrier's own operations (API.md §11.3). */
export const sandbox = [sandboxInboundOperation];
