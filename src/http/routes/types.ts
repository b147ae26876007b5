import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';
import type { RecordMappers } from '../../domain/records.ts';
import type { Store } from '../../store/db.ts';

/** What every operation's route needs. */
export interface RouteDeps {
  store: Store;
  mappers: RecordMappers;
  config: Config;
}

/** One operation of the spec: its path, the methods it answers (CONVENTIONS §5) and its registration. */
export interface Operation {
  path: string;
  methods: readonly ('GET' | 'POST' | 'PUT' | 'PATCH')[];
  register(app: FastifyInstance, deps: RouteDeps): void;
}
