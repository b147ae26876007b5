/**
 * Choosing a carrier per message (docs/API.md §14.1): the rule of MSGSVC_ROUTES that
 * applies to a recipient, and the carriers of that rule that take the message's type, in failover
 * order. Pure and precomputed: the dispatcher calls it per message. Parsing the settings is
 * src/lib/carrier-settings.ts (base layer, so src/config.ts validates them at start); its types and
 * parsers are re-exported here for the loops.
 *
 * Which carrier of the list gets a message is the dispatcher's: the first that is ready; while none
 * is, the message waits Queued. An empty list (no rule matches, or no carrier of the rule takes the
 * type) ends it Failed with noRouteCode(type), refunded.
 */
import type { CarrierSpec, RouteRule } from '../lib/carrier-settings.ts';

export {
  CARRIER_DEFAULTS,
  CARRIER_LIMITS,
  CarrierSettingError,
  parseCarriers,
  parsePublicUrl,
  parseRoutes,
  type CarrierKind,
  type CarrierSpec,
  type LegacyCarrierSettings,
  type RouteRule,
} from '../lib/carrier-settings.ts';

/** The two message types routes tell apart (Type_Id 1 and 2). */
export type MessageType = 'sms' | 'mms';

/** What a carrier must tell the router: its name and whether it takes MMS (a CarrierSpec will do). */
export type CarrierCapability = Pick<CarrierSpec, 'name' | 'supportsMms'>;

/** `NO_ROUTE`, or `NO_MMS_ROUTE` for an MMS: the ErrorCode of a message no carrier of its rule can take (API.md §14.1). */
export function noRouteCode(type: MessageType): 'NO_ROUTE' | 'NO_MMS_ROUTE' {
  return type === 'mms' ? 'NO_MMS_ROUTE' : 'NO_ROUTE';
}

/** The rules of one type, ready for lookup: the rule per prefix, typed ones over untyped, and the prefix lengths, longest first. */
interface TypeTable {
  readonly byPrefix: ReadonlyMap<string, RouteRule>;
  readonly lengths: readonly number[];
}

function typeTable(rules: readonly RouteRule[], type: MessageType): TypeTable {
  const byPrefix = new Map<string, RouteRule>();
  // Untyped first, then typed ones of this type over them: a typed rule wins a tie (API.md §14.1).
  for (const r of rules) if (r.type === undefined) byPrefix.set(r.prefix, r);
  for (const r of rules) if (r.type === type) byPrefix.set(r.prefix, r);
  const lengths = [...new Set([...byPrefix.keys()].map((p) => p.length))].sort((a, b) => b - a);
  return { byPrefix, lengths };
}

function lookup(table: TypeTable, digits: string): RouteRule | undefined {
  for (const len of table.lengths) {
    if (len > digits.length) continue;
    const rule = table.byPrefix.get(len === digits.length ? digits : digits.slice(0, len));
    if (rule) return rule;
  }
  return undefined;
}

const compiled = new WeakMap<readonly RouteRule[], Record<MessageType, TypeTable>>();

function tablesOf(rules: readonly RouteRule[]): Record<MessageType, TypeTable> {
  let tables = compiled.get(rules);
  if (!tables) {
    tables = { sms: typeTable(rules, 'sms'), mms: typeTable(rules, 'mms') };
    // Only a frozen list (as parseRoutes returns) is cached: a mutable one could change under the cache.
    if (Object.isFrozen(rules)) compiled.set(rules, tables);
  }
  return tables;
}

/**
 * The rule of MSGSVC_ROUTES for a message (API.md §14.1): among the rules of its type or of no type, the one
 * with the longest prefix of `recipientDigits` (`*` matches everything, with length 0); at equal
 * length, the typed rule. Undefined when none matches (then: Failed noRouteCode(type)).
 * `recipientDigits`: the recipient as digits (E.164 without `+`, or a short code). A frozen rules
 * list (parseRoutes's) is compiled once and cached: then it costs at most one Map lookup per
 * distinct prefix length.
 */
export function chooseRule(rules: readonly RouteRule[], recipientDigits: string, type: MessageType): RouteRule | undefined {
  return lookup(tablesOf(rules)[type], recipientDigits);
}

/**
 * The carriers of `rule` that take `type`, in the rule's (failover) order: every one for an SMS;
 * for an MMS, those whose `supportsMms` is true. A name not among `carriers` is left out (parseRoutes
 * allows none). Empty: the message can go nowhere (noRouteCode(type)).
 */
export function candidates(rule: RouteRule, type: MessageType, carriers: readonly CarrierCapability[]): string[] {
  const mms = new Set(carriers.filter((c) => c.supportsMms).map((c) => c.name));
  const known = new Set(carriers.map((c) => c.name));
  return rule.carriers.filter((name) => known.has(name) && (type === 'sms' || mms.has(name)));
}

/** Where a message may go: the carrier names in failover order; empty: nowhere, Failed `errorCode`. */
export interface Route {
  /** The rule that applied; undefined when none matched. */
  readonly rule: RouteRule | undefined;
  /** Carrier names that take the type, in the rule's order (frozen, shared between calls). */
  readonly carriers: readonly string[];
  /** The ErrorCode when `carriers` is empty: `NO_ROUTE` or `NO_MMS_ROUTE`. */
  readonly errorCode: 'NO_ROUTE' | 'NO_MMS_ROUTE';
}

/** The dispatcher's router: everything precomputed, no allocation per message but one string slice per prefix length tried. */
export interface Router {
  /** chooseRule and candidates in one step. */
  route(recipientDigits: string, type: MessageType): Route;
}

/**
 * A router over `rules` (parseRoutes) and `carriers` (parseCarriers, or anything with a name and
 * supportsMms): per type, the rule table and each rule's candidates are computed here, once.
 */
export function createRouter(rules: readonly RouteRule[], carriers: readonly CarrierCapability[]): Router {
  const tables = { sms: typeTable(rules, 'sms'), mms: typeTable(rules, 'mms') };
  const routes = new Map<RouteRule, Record<MessageType, Route>>();
  const none: Record<MessageType, Route> = {
    sms: Object.freeze({ rule: undefined, carriers: Object.freeze([]), errorCode: 'NO_ROUTE' }),
    mms: Object.freeze({ rule: undefined, carriers: Object.freeze([]), errorCode: 'NO_MMS_ROUTE' }),
  };
  for (const rule of rules) {
    routes.set(rule, {
      sms: Object.freeze({ rule, carriers: Object.freeze(candidates(rule, 'sms', carriers)), errorCode: 'NO_ROUTE' }),
      mms: Object.freeze({ rule, carriers: Object.freeze(candidates(rule, 'mms', carriers)), errorCode: 'NO_MMS_ROUTE' }),
    });
  }
  return {
    route(recipientDigits, type) {
      const rule = lookup(tables[type], recipientDigits);
      return (rule ? routes.get(rule) : undefined)?.[type] ?? none[type];
    },
  };
}
