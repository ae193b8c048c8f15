/**
 * What an agent card's signatures are computed over (A2A 1.0 §8.4.1): the card with its default
 * values and its `signatures` left out, canonicalised with JCS (RFC 8785). The signer (the Fastify
 * plugin) and the verifier (the client) both call {@link canonicalCardPayload}, so the two can
 * never disagree on the bytes.
 *
 * Two forms, chosen by the card's shape:
 * - `1.0` — a card in 1.0's shape alone (no top-level `url`): the card is read as 1.0's
 *   `AgentCard` message (members outside its schema dropped, oneofs keeping their first case,
 *   values coerced as ProtoJSON reads them), fields at their proto3 default dropped, then every
 *   empty value (`""`, `null`, `[]`, `{}`) dropped, at any depth. This is the payload the official
 *   SDK computes (@a2a-js/sdk 1.x `canonicalizeAgentCard`: `AgentCard.fromJSON`/`toJSON`, then
 *   `cleanEmpty`), so a card one signs, the other verifies. The SDK goes further than the spec's
 *   example, which keeps REQUIRED members that are empty (`"skills": []`): we follow the SDK,
 *   whose verifier is the one clients run.
 * - `json` — a 0.3 card, or the combined card (0.3's members with 1.0's beside them): 0.3 has no
 *   proto-driven form, and the 1.0 form would drop `url`, `preferredTransport`, `protocolVersion`
 *   and 0.3's `security`, leaving a 0.3 client's view of the card unsigned. Every member is kept;
 *   empty values are dropped as in the `1.0` form (a `false` or a `0` stays).
 *
 * The form follows from the card itself, so a verifier needs no hint: adding or removing `url`
 * changes the payload, and so breaks the signature.
 */

import canonicalize from 'canonicalize';
import { isJsonObject, type JsonObject } from '../json.js';

/** Which canonical form a card's signatures cover (see the module's comment). */
export type CardSignatureForm = '1.0' | 'json';

/** The form of a card: `json` when it carries 0.3's `url` (a 0.3 or a combined card), else `1.0`. */
export function cardSignatureFormOf(card: JsonObject): CardSignatureForm {
  return card.url !== undefined ? 'json' : '1.0';
}

/**
 * The JCS text a card's signatures are computed over (its JWS payload, before base64url).
 * @param form defaults to the card's own ({@link cardSignatureFormOf}).
 * @throws {TypeError} for a value JCS cannot represent (a lone surrogate, a non-finite number).
 */
export function canonicalCardPayload(card: JsonObject, form: CardSignatureForm = cardSignatureFormOf(card)): string {
  const { signatures: _signatures, ...rest } = card;
  const projected = form === '1.0' ? agentCard(rest) : rest;
  // §8.4.1: the signatures are excluded, whichever form (a 1.0 projection drops them above too).
  const cleaned = withoutEmpty(projected);
  try {
    return canonicalize(cleaned ?? {}) ?? '{}';
  } catch (error) {
    throw new TypeError(`the agent card cannot be canonicalised (RFC 8785): ${(error as Error).message}`);
  }
}

/**
 * Drops `""`, `null`, `undefined`, empty arrays and objects at any depth, and members that become
 * empty by it; `null` for a value that is empty itself. The rule of the SDKs' `cleanEmpty`.
 */
function withoutEmpty(value: unknown): unknown {
  if (value === '' || value === null || value === undefined) return null;
  if (Array.isArray(value)) {
    const items = value.map(withoutEmpty).filter((item) => item !== null);
    return items.length > 0 ? items : null;
  }
  if (typeof value === 'object') {
    const out: JsonObject = {};
    for (const [key, member] of Object.entries(value as JsonObject)) {
      const cleaned = withoutEmpty(member);
      if (cleaned !== null) out[key] = cleaned;
    }
    return Object.keys(out).length > 0 ? out : null;
  }
  return value;
}

// ---- 1.0's AgentCard as ProtoJSON reads and writes it (specification/a2a.proto) ----
//
// Each reader mirrors one message: a member is read under its JSON name, else its proto name
// (ProtoJSON parsers accept both), and written under its JSON name, only when it holds something
// other than its proto3 default — except `optional` fields, which keep an explicit default
// (`"streaming": false`). The empty values left are dropped afterwards by `withoutEmpty`.

type Reader = (value: JsonObject) => JsonObject;

const isSet = (value: unknown): boolean => value !== null && value !== undefined;

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The member under its JSON name if set, else under its proto name. */
function member(object: JsonObject, name: string): unknown {
  if (isSet(object[name])) return object[name];
  return object[snakeCase(name)];
}

/** A repeated member: the first of the two names that holds an array. */
function repeated(object: JsonObject, name: string): unknown[] | undefined {
  if (Array.isArray(object[name])) return object[name] as unknown[];
  const snake = object[snakeCase(name)];
  return Array.isArray(snake) ? snake : undefined;
}

/** A map member: the first of the two names that holds an object. */
function map(object: JsonObject, name: string): JsonObject | undefined {
  const value = object[name];
  if (value !== null && typeof value === 'object') return value as JsonObject;
  const snake = object[snakeCase(name)];
  return snake !== null && typeof snake === 'object' ? (snake as JsonObject) : undefined;
}

const asObject = (value: unknown): JsonObject => (isJsonObject(value) ? value : {});

interface MessageSpec {
  /** `string` fields (written when not `""`). */
  strings?: readonly string[];
  /** `optional string` fields (written when set). */
  optionalStrings?: readonly string[];
  /** `bool` fields (written when true). */
  bools?: readonly string[];
  /** `optional bool` fields (written when set, `false` included). */
  optionalBools?: readonly string[];
  /** `repeated string` fields. */
  stringLists?: readonly string[];
  /** `map<string, string>` fields. */
  stringMaps?: readonly string[];
  /** `google.protobuf.Struct` fields, kept as they are. */
  structs?: readonly string[];
  /** Message fields and their readers. */
  messages?: Readonly<Record<string, () => Reader>>;
  /** `repeated` message fields and their readers. */
  messageLists?: Readonly<Record<string, () => Reader>>;
  /** `map<string, message>` fields and their readers. */
  messageMaps?: Readonly<Record<string, () => Reader>>;
  /** A oneof: its cases in field order (the first set one wins, as generated readers do). */
  oneof?: Readonly<Record<string, () => Reader>>;
}

function message(spec: MessageSpec): Reader {
  return (object) => {
    const out: JsonObject = {};
    for (const name of spec.strings ?? []) {
      const value = member(object, name);
      if (isSet(value) && String(value) !== '') out[name] = String(value);
    }
    for (const name of spec.optionalStrings ?? []) {
      const value = member(object, name);
      if (isSet(value)) out[name] = String(value);
    }
    for (const name of spec.bools ?? []) {
      if (isSet(member(object, name)) && member(object, name)) out[name] = true;
    }
    for (const name of spec.optionalBools ?? []) {
      const value = member(object, name);
      if (isSet(value)) out[name] = Boolean(value);
    }
    for (const name of spec.stringLists ?? []) {
      const list = repeated(object, name);
      if (list !== undefined && list.length > 0) out[name] = list.map((item) => String(item));
    }
    for (const name of spec.stringMaps ?? []) {
      const entries = Object.entries(map(object, name) ?? {});
      if (entries.length > 0) out[name] = Object.fromEntries(entries.map(([k, v]) => [k, String(v)]));
    }
    for (const name of spec.structs ?? []) {
      const value = object[name];
      if (value !== null && typeof value === 'object') out[name] = value;
    }
    for (const [name, reader] of Object.entries(spec.messages ?? {})) {
      const value = member(object, name);
      if (isSet(value)) out[name] = reader()(asObject(value));
    }
    for (const [name, reader] of Object.entries(spec.messageLists ?? {})) {
      const list = repeated(object, name);
      if (list !== undefined && list.length > 0) out[name] = list.map((item) => reader()(asObject(item)));
    }
    for (const [name, reader] of Object.entries(spec.messageMaps ?? {})) {
      const entries = Object.entries(map(object, name) ?? {});
      if (entries.length > 0) out[name] = Object.fromEntries(entries.map(([k, v]) => [k, reader()(asObject(v))]));
    }
    for (const [name, reader] of Object.entries(spec.oneof ?? {})) {
      const value = member(object, name);
      if (isSet(value)) {
        out[name] = reader()(asObject(value));
        break;
      }
    }
    return out;
  };
}

const oauthFlowFields = {
  stringMaps: ['scopes'],
} as const;

const authorizationCodeFlow = message({
  strings: ['authorizationUrl', 'tokenUrl', 'refreshUrl'],
  bools: ['pkceRequired'],
  ...oauthFlowFields,
});
const clientCredentialsFlow = message({ strings: ['tokenUrl', 'refreshUrl'], ...oauthFlowFields });
const implicitFlow = message({ strings: ['authorizationUrl', 'refreshUrl'], ...oauthFlowFields });
const passwordFlow = message({ strings: ['tokenUrl', 'refreshUrl'], ...oauthFlowFields });
const deviceCodeFlow = message({ strings: ['deviceAuthorizationUrl', 'tokenUrl', 'refreshUrl'], ...oauthFlowFields });

const oauthFlows = message({
  oneof: {
    authorizationCode: () => authorizationCodeFlow,
    clientCredentials: () => clientCredentialsFlow,
    implicit: () => implicitFlow,
    password: () => passwordFlow,
    deviceCode: () => deviceCodeFlow,
  },
});

const securityScheme = message({
  oneof: {
    apiKeySecurityScheme: () => message({ strings: ['description', 'location', 'name'] }),
    httpAuthSecurityScheme: () => message({ strings: ['description', 'scheme', 'bearerFormat'] }),
    oauth2SecurityScheme: () =>
      message({ strings: ['description', 'oauth2MetadataUrl'], messages: { flows: () => oauthFlows } }),
    openIdConnectSecurityScheme: () => message({ strings: ['description', 'openIdConnectUrl'] }),
    mtlsSecurityScheme: () => message({ strings: ['description'] }),
  },
});

const securityRequirement = message({
  messageMaps: { schemes: () => message({ stringLists: ['list'] }) },
});

const agentCard: Reader = message({
  strings: ['name', 'description', 'version'],
  optionalStrings: ['documentationUrl', 'iconUrl'],
  messages: {
    provider: () => message({ strings: ['url', 'organization'] }),
    capabilities: () =>
      message({
        optionalBools: ['streaming', 'pushNotifications', 'extendedAgentCard'],
        messageLists: {
          extensions: () => message({ strings: ['uri', 'description'], bools: ['required'], structs: ['params'] }),
        },
      }),
  },
  messageLists: {
    supportedInterfaces: () => message({ strings: ['url', 'protocolBinding', 'tenant', 'protocolVersion'] }),
    securityRequirements: () => securityRequirement,
    skills: () =>
      message({
        strings: ['id', 'name', 'description'],
        stringLists: ['tags', 'examples', 'inputModes', 'outputModes'],
        messageLists: { securityRequirements: () => securityRequirement },
      }),
  },
  messageMaps: { securitySchemes: () => securityScheme },
  stringLists: ['defaultInputModes', 'defaultOutputModes'],
});
