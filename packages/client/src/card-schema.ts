/**
 * The AgentCard's JSON schema in both protocol versions, for `a2a card get --validate` (a2a-cli
 * SPEC.md v0.2 §8.1: "check the card against the A2A schema"). Core carries the schemas of the
 * requests a server reads, not the card a client reads, so the card's live here. Written from the
 * specifications: 0.3 §5.5 (AgentCard, AgentInterface, AgentSkill, SecurityScheme) and 1.0 §4.4
 * (AgentCard and its parts, as ProtoJSON: camelCase members, a `oneof` as one present member).
 *
 * Members neither version defines are allowed: the card this project serves by default carries
 * both versions' members side by side, and each version's readers ignore the other's.
 */

import { createAjv, type JsonObject as Json } from '@fastify-a2a/core/protocol';
import { A2AClientError } from './errors.js';

/** One broken rule: where (a JSON pointer, RFC 6901), which rule, and what the card must do. */
export interface CardViolation {
  /** The version whose schema the card breaks: `1.0` or `0.3`. */
  version: CardSchemaVersion;
  /** Where in the card: `/supportedInterfaces/0/url`; `` for the card itself. */
  pointer: string;
  /** The schema keyword broken: `required`, `type`, `format`, `enum`… */
  rule: string;
  /** What the value must be, e.g. `must be an absolute URL`. */
  message: string;
}

export type CardSchemaVersion = '1.0' | '0.3';

const stringList = { type: 'array', items: { type: 'string' } } as const;
const freeObject = { type: 'object' } as const;
const absoluteUrl = { type: 'string', format: 'uri' } as const;

// ---- A2A 0.3 §5.5 ----

const extension = {
  type: 'object',
  required: ['uri'],
  properties: {
    uri: { type: 'string' },
    description: { type: 'string' },
    required: { type: 'boolean' },
    params: freeObject,
  },
} as const;

/** The members a 0.3 security scheme of one `type` must have (JSON Schema's `if`/`then`). */
function requiredWhenTypeIs(type: string, required: string[]) {
  return {
    if: { properties: { type: { const: type } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then` keyword, in a schema ajv compiles; never awaited.
    then: { required },
  };
}

/** 0.3 §5.5.2.1: an OpenAPI security scheme object, its members by `type`. */
const securityScheme0_3 = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['apiKey', 'http', 'oauth2', 'openIdConnect', 'mutualTLS'] },
    description: { type: 'string' },
    name: { type: 'string' },
    in: { type: 'string', enum: ['query', 'header', 'cookie'] },
    scheme: { type: 'string' },
    bearerFormat: { type: 'string' },
    flows: freeObject,
    openIdConnectUrl: absoluteUrl,
  },
  allOf: [
    requiredWhenTypeIs('apiKey', ['name', 'in']),
    requiredWhenTypeIs('http', ['scheme']),
    requiredWhenTypeIs('oauth2', ['flows']),
    requiredWhenTypeIs('openIdConnect', ['openIdConnectUrl']),
  ],
} as const;

/** AgentCapabilities: the same in both versions but for one flag (0.3 §5.5.2, 1.0 §4.4.3). */
function capabilitiesWith(flag: 'stateTransitionHistory' | 'extendedAgentCard') {
  return {
    type: 'object',
    properties: {
      streaming: { type: 'boolean' },
      pushNotifications: { type: 'boolean' },
      [flag]: { type: 'boolean' },
      extensions: { type: 'array', items: extension },
    },
  } as const;
}

/** AgentSkill: the same in both versions but for the member naming its security (0.3 §5.5.4, 1.0 §4.4.5). */
function skillWith(securityMember: 'security' | 'securityRequirements', securitySchema: object) {
  return {
    type: 'object',
    required: ['id', 'name', 'description', 'tags'],
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      description: { type: 'string' },
      tags: stringList,
      examples: stringList,
      inputModes: stringList,
      outputModes: stringList,
      [securityMember]: securitySchema,
    },
  } as const;
}

const security0_3 = { type: 'array', items: { type: 'object', additionalProperties: stringList } } as const;

const signature = {
  type: 'object',
  required: ['protected', 'signature'],
  properties: { protected: { type: 'string' }, signature: { type: 'string' }, header: freeObject },
} as const;

const provider = {
  type: 'object',
  required: ['organization', 'url'],
  properties: { organization: { type: 'string' }, url: absoluteUrl },
} as const;

export const agentCardSchema0_3 = {
  type: 'object',
  required: [
    'name',
    'description',
    'url',
    'version',
    'protocolVersion',
    'capabilities',
    'defaultInputModes',
    'defaultOutputModes',
    'skills',
  ],
  properties: {
    protocolVersion: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    url: absoluteUrl,
    preferredTransport: { type: 'string' },
    additionalInterfaces: {
      type: 'array',
      items: {
        type: 'object',
        required: ['url', 'transport'],
        properties: { url: absoluteUrl, transport: { type: 'string' } },
      },
    },
    iconUrl: absoluteUrl,
    provider,
    version: { type: 'string' },
    documentationUrl: absoluteUrl,
    capabilities: capabilitiesWith('stateTransitionHistory'),
    securitySchemes: { type: 'object', additionalProperties: securityScheme0_3 },
    security: security0_3,
    defaultInputModes: stringList,
    defaultOutputModes: stringList,
    skills: { type: 'array', items: skillWith('security', security0_3) },
    supportsAuthenticatedExtendedCard: { type: 'boolean' },
    signatures: { type: 'array', items: signature },
  },
} as const;

// ---- A2A 1.0 §4.4 (ProtoJSON) ----

/** 1.0 §4.5: a SecurityScheme is a `oneof`, so exactly one of these members. */
const securityScheme1_0 = {
  type: 'object',
  properties: {
    apiKeySecurityScheme: {
      type: 'object',
      required: ['location', 'name'],
      properties: { description: { type: 'string' }, location: { type: 'string' }, name: { type: 'string' } },
    },
    httpAuthSecurityScheme: {
      type: 'object',
      required: ['scheme'],
      properties: { description: { type: 'string' }, scheme: { type: 'string' }, bearerFormat: { type: 'string' } },
    },
    oauth2SecurityScheme: {
      type: 'object',
      required: ['flows'],
      properties: {
        description: { type: 'string' },
        flows: freeObject,
        oauth2MetadataUrl: absoluteUrl,
      },
    },
    openIdConnectSecurityScheme: {
      type: 'object',
      required: ['openIdConnectUrl'],
      properties: { description: { type: 'string' }, openIdConnectUrl: absoluteUrl },
    },
    mtlsSecurityScheme: { type: 'object', properties: { description: { type: 'string' } } },
  },
  oneOf: [
    { required: ['apiKeySecurityScheme'] },
    { required: ['httpAuthSecurityScheme'] },
    { required: ['oauth2SecurityScheme'] },
    { required: ['openIdConnectSecurityScheme'] },
    { required: ['mtlsSecurityScheme'] },
  ],
} as const;

const securityRequirements1_0 = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      schemes: {
        type: 'object',
        additionalProperties: { type: 'object', properties: { list: stringList } },
      },
    },
  },
} as const;

export const agentCardSchema1_0 = {
  type: 'object',
  required: [
    'name',
    'description',
    'supportedInterfaces',
    'version',
    'capabilities',
    'defaultInputModes',
    'defaultOutputModes',
    'skills',
  ],
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    supportedInterfaces: {
      type: 'array',
      // An agent with no interface cannot be called: 1.0 §4.4.1 lists the preferred one first.
      minItems: 1,
      items: {
        type: 'object',
        required: ['url', 'protocolBinding', 'protocolVersion'],
        properties: {
          url: absoluteUrl,
          protocolBinding: { type: 'string', format: 'a2a-binding' },
          tenant: { type: 'string' },
          protocolVersion: { type: 'string' },
        },
      },
    },
    provider,
    version: { type: 'string' },
    documentationUrl: absoluteUrl,
    capabilities: capabilitiesWith('extendedAgentCard'),
    securitySchemes: { type: 'object', additionalProperties: securityScheme1_0 },
    securityRequirements: securityRequirements1_0,
    defaultInputModes: stringList,
    defaultOutputModes: stringList,
    skills: { type: 'array', items: skillWith('securityRequirements', securityRequirements1_0) },
    signatures: { type: 'array', items: signature },
    iconUrl: absoluteUrl,
  },
} as const;

/** 1.0 §5.8: the core bindings by name; any other binding is named by a URI. */
export const CORE_BINDINGS = ['JSONRPC', 'GRPC', 'HTTP+JSON'] as const;

const isAbsoluteUrl = (value: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(value) && URL.canParse(value);

const ajv = createAjv();
ajv.addFormat('uri', { type: 'string', validate: isAbsoluteUrl });
ajv.addFormat('a2a-binding', {
  type: 'string',
  validate: (value) => (CORE_BINDINGS as readonly string[]).includes(value) || isAbsoluteUrl(value),
});
const validators = {
  '0.3': ajv.compile(agentCardSchema0_3),
  '1.0': ajv.compile(agentCardSchema1_0),
};

/**
 * The versions a card declares, so the schemas it must meet: 0.3's when it carries 0.3's
 * `protocolVersion` (required there, absent from 1.0's card), 1.0's when it lists
 * `supportedInterfaces` (1.0's, which 0.3 does not define). The combined card does both. A card
 * that declares neither is held to 1.0's, the version this CLI speaks by default (SPEC §11.2).
 */
export function declaredVersions(card: Json): CardSchemaVersion[] {
  const versions: CardSchemaVersion[] = [];
  if (card.supportedInterfaces !== undefined) versions.push('1.0');
  const declares0_3 =
    typeof card.protocolVersion === 'string'
      ? card.protocolVersion.startsWith('0.')
      : card.supportedInterfaces === undefined && card.url !== undefined;
  if (declares0_3) versions.push('0.3');
  return versions.length > 0 ? versions : ['1.0'];
}

const escapePointerToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every rule of its declared versions' schemas that a card breaks; empty for a valid card. */
export function validateAgentCard(value: unknown): CardViolation[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return [{ version: '1.0', pointer: '', rule: 'type', message: 'must be a JSON object' }];
  }
  const violations: CardViolation[] = [];
  for (const version of declaredVersions(value as Json)) {
    const validate = validators[version];
    if (validate(value)) continue;
    for (const error of validate.errors ?? []) {
      // A failed `if` only says its `then` failed, which is reported on its own.
      if (error.keyword === 'if') continue;
      let pointer = error.instancePath;
      let message = error.message ?? 'is invalid';
      const params = error.params as Record<string, unknown>;
      if (error.keyword === 'required') {
        pointer = `${pointer}/${escapePointerToken(String(params.missingProperty))}`;
        message = 'is required';
      } else if (error.keyword === 'enum') {
        message = `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
      } else if (error.keyword === 'format' && params.format === 'uri') {
        message = 'must be an absolute URL';
      } else if (error.keyword === 'format' && params.format === 'a2a-binding') {
        message = `must be ${CORE_BINDINGS.join(', ')} or a URI naming a custom binding (A2A 1.0 §5.8)`;
      } else if (error.keyword === 'oneOf') {
        message =
          'must have exactly one of apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme';
      }
      const rule = error.keyword === 'format' ? `format:${String(params.format)}` : error.keyword;
      // A `oneOf`'s branches each report their `required`; its own message says it all.
      if (error.keyword === 'required' && error.schemaPath.includes('/oneOf/')) continue;
      if (!violations.some((v) => v.version === version && v.pointer === pointer && v.rule === rule)) {
        violations.push({ version, pointer, rule, message });
      }
    }
  }
  return violations;
}

/** One line per violation: `[1.0] /supportedInterfaces/0/url (format:uri) must be an absolute URL`. */
export function describeViolation(violation: CardViolation): string {
  return `[${violation.version}] ${violation.pointer || '/'} (${violation.rule}) ${violation.message}`;
}

/**
 * A card check for `resolveCard` that holds the card to its declared versions' schemas: throws a
 * `card-invalid` error whose `data` lists every violation, so none is hidden behind the first.
 */
export function checkCardSchema(value: unknown, source: string): Json {
  const violations = validateAgentCard(value);
  if (violations.length === 0) return value as Json;
  const first = violations[0] as CardViolation;
  const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : '';
  throw new A2AClientError(
    'card-invalid',
    `${source} breaks the A2A agent card schema: ${describeViolation(first)}${more}.`,
    { data: violations },
  );
}
