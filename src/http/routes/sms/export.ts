import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { exportMessages, readExportQuery } from '../../../domain/message-export.ts';
import { MessageRecordSchema, messageRecord, type MessageRecord, type MessageRow } from '../../../records/messages.ts';
import { defineOperation } from '../../operation.ts';
import { CSV_TYPE, csvText } from '../../serializers/csv.ts';

/** The columns: the Message record's fields, in its order (docs/API.md §9.11). */
const COLUMNS = Object.keys(MessageRecordSchema.properties) as (keyof MessageRecord)[];

/** A record's cells, in COLUMNS order: its values as JSON shows them, null as an empty cell. */
const cellsOf = (record: MessageRecord) => COLUMNS.map((c) => record[c]);

/** The file: the header row, then one row per message, one batch of the log at a time. */
async function* csvChunks(
  first: IteratorResult<MessageRow[], void>,
  rest: AsyncGenerator<MessageRow[], void, undefined>,
  toRecord: (row: MessageRow) => MessageRecord,
): AsyncGenerator<string, void, undefined> {
  try {
    yield csvText([COLUMNS]);
    if (first.done) return;
    yield csvText(first.value.map((row) => cellsOf(toRecord(row))));
    for await (const rows of rest) yield csvText(rows.map((row) => cellsOf(toRecord(row))));
  } finally {
    // Stopped early (the client went away): the log's reading stops with it.
    await rest.return();
  }
}

function setCsvHeaders(reply: FastifyReply): void {
  // The negotiated JSON or XML type (set for the errors) gives way to the file's own.
  reply.raw.setHeader('Content-Type', CSV_TYPE);
  reply.raw.setHeader('Content-Disposition', 'attachment; filename="messages.csv"');
}

/**
 * sms/export (docs/API.md §10.9): the message log as a CSV file, newest first, with sms/index's
 * filters and `from`/`to` on `DateCreated` (sms/stats' reading); not paginated. Streamed: the log
 * is read in keyset batches of 500 rows (src/domain/message-export.ts), the next one only when
 * the client has taken the last (the stream's backpressure), and no more once the client has gone
 * (Fastify destroys the stream, which ends the reading). The first batch is read before the
 * answer starts, so that a store that cannot be reached is still a 503; a failure later cuts the
 * file short (the chunked body never ends), which a client sees as an error.
 *
 * Not negotiated on success: whatever the `Accept` or `_format`, a 200 is CSV; errors (401, 403,
 * 422, 429, …) are rendered in the negotiated JSON or XML, or JSON when neither matches. HEAD
 * checks the query and sends the headers, reading nothing.
 */
export const smsExport = defineOperation({
  id: 'sms.export',
  path: '/v1/sms/export',
  resource: 'sms',
  methods: ['GET'],
  summary: 'Download the message log as CSV',
  success: 200,
  produces: 'csv',
  schema: {
    query: Type.Object({
      Direction: Type.Optional(Type.String({ description: 'Outbound or Inbound' })),
      Status_Id: Type.Optional(Type.String({ description: '1 Queued … 7 Received' })),
      MobilePhone: Type.Optional(Type.String({ description: 'the other party, any common format' })),
      BatchId: Type.Optional(Type.String({ description: 'messages of one send-group batch' })),
      from: Type.Optional(Type.String({ description: 'YYYY-MM-DD HH:MM:SS in the service time zone: messages created at or after it' })),
      to: Type.Optional(Type.String({ description: 'YYYY-MM-DD HH:MM:SS in the service time zone: messages created at or before it' })),
    }),
  },
  handler: ({ store, time, config }) => {
    const toRecord = messageRecord(time);
    return async (ctx) => {
      const query = readExportQuery(
        {
          Direction: ctx.query('Direction'),
          Status_Id: ctx.query('Status_Id'),
          MobilePhone: ctx.query('MobilePhone'),
          BatchId: ctx.query('BatchId'),
          from: ctx.query('from'),
          to: ctx.query('to'),
        },
        config.defaultRegion,
        config.timeZone,
      );
      if (ctx.request.method === 'HEAD') {
        setCsvHeaders(ctx.reply);
        return Readable.from([]);
      }
      const batches = exportMessages(store, ctx.accountId, query);
      const first = await batches.next();
      setCsvHeaders(ctx.reply);
      return Readable.from(csvChunks(first, batches, toRecord), { objectMode: false });
    };
  },
});
