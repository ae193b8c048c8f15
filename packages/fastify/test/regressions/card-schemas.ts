/**
 * JSON Schemas of the AgentCard written from each version's specification, strict (no member the
 * version does not define), for issue 23's card tests:
 * - 0.3: the AgentCard of A2A 0.3's JSON Schema (§5.5): `protocolVersion`, `url`,
 *   `preferredTransport`, `additionalInterfaces`, `security`, `supportsAuthenticatedExtendedCard`,
 *   security schemes with a `type` discriminator;
 * - 1.0: the AgentCard message of A2A 1.0's `a2a.proto` in ProtoJSON (§4.4): `supportedInterfaces`,
 *   `securityRequirements`, `capabilities.extendedAgentCard`, security schemes as a oneof.
 */

const strings = { type: 'array', items: { type: 'string' } } as const;
const provider = {
  type: 'object',
  required: ['url', 'organization'],
  properties: { url: { type: 'string' }, organization: { type: 'string' } },
  additionalProperties: false,
} as const;
const extension = {
  type: 'object',
  required: ['uri'],
  properties: {
    uri: { type: 'string' },
    description: { type: 'string' },
    required: { type: 'boolean' },
    params: { type: 'object' },
  },
  additionalProperties: false,
} as const;
const signature = {
  type: 'object',
  required: ['protected', 'signature'],
  properties: { protected: { type: 'string' }, signature: { type: 'string' }, header: { type: 'object' } },
  additionalProperties: false,
} as const;

// ---- 0.3 ----

const security0_3 = { type: 'array', items: { type: 'object', additionalProperties: strings } } as const;
const schemeOf0_3 = (type: string, required: string[], properties: Record<string, unknown>) => ({
  type: 'object',
  required: ['type', ...required],
  properties: { type: { const: type }, description: { type: 'string' }, ...properties },
  additionalProperties: false,
});

export const agentCardSchema0_3 = {
  type: 'object',
  required: [
    'protocolVersion',
    'name',
    'description',
    'url',
    'version',
    'capabilities',
    'defaultInputModes',
    'defaultOutputModes',
    'skills',
  ],
  properties: {
    protocolVersion: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    url: { type: 'string' },
    preferredTransport: { type: 'string' },
    additionalInterfaces: {
      type: 'array',
      items: {
        type: 'object',
        required: ['url', 'transport'],
        properties: { url: { type: 'string' }, transport: { type: 'string' } },
        additionalProperties: false,
      },
    },
    iconUrl: { type: 'string' },
    provider,
    version: { type: 'string' },
    documentationUrl: { type: 'string' },
    capabilities: {
      type: 'object',
      properties: {
        streaming: { type: 'boolean' },
        pushNotifications: { type: 'boolean' },
        stateTransitionHistory: { type: 'boolean' },
        extensions: { type: 'array', items: extension },
      },
      additionalProperties: false,
    },
    securitySchemes: {
      type: 'object',
      additionalProperties: {
        oneOf: [
          schemeOf0_3('apiKey', ['in', 'name'], {
            in: { enum: ['query', 'header', 'cookie'] },
            name: { type: 'string' },
          }),
          schemeOf0_3('http', ['scheme'], { scheme: { type: 'string' }, bearerFormat: { type: 'string' } }),
          schemeOf0_3('oauth2', ['flows'], { flows: { type: 'object' }, oauth2MetadataUrl: { type: 'string' } }),
          schemeOf0_3('openIdConnect', ['openIdConnectUrl'], { openIdConnectUrl: { type: 'string' } }),
          schemeOf0_3('mutualTLS', [], {}),
        ],
      },
    },
    security: security0_3,
    defaultInputModes: strings,
    defaultOutputModes: strings,
    skills: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'description', 'tags'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          description: { type: 'string' },
          tags: strings,
          examples: strings,
          inputModes: strings,
          outputModes: strings,
          security: security0_3,
        },
        additionalProperties: false,
      },
    },
    supportsAuthenticatedExtendedCard: { type: 'boolean' },
    signatures: { type: 'array', items: signature },
  },
  additionalProperties: false,
} as const;

// ---- 1.0 ----

const securityRequirements1_0 = {
  type: 'array',
  items: {
    type: 'object',
    required: ['schemes'],
    properties: {
      schemes: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          properties: { list: strings },
          additionalProperties: false,
        },
      },
    },
    additionalProperties: false,
  },
} as const;
const oneofMember = (member: string, required: string[], properties: Record<string, unknown>) => ({
  type: 'object',
  required: [member],
  properties: {
    [member]: {
      type: 'object',
      required,
      properties: { description: { type: 'string' }, ...properties },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
});

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
      minItems: 1,
      items: {
        type: 'object',
        required: ['url', 'protocolBinding', 'protocolVersion'],
        properties: {
          url: { type: 'string' },
          protocolBinding: { type: 'string' },
          tenant: { type: 'string' },
          protocolVersion: { type: 'string' },
        },
        additionalProperties: false,
      },
    },
    provider,
    version: { type: 'string' },
    documentationUrl: { type: 'string' },
    capabilities: {
      type: 'object',
      properties: {
        streaming: { type: 'boolean' },
        pushNotifications: { type: 'boolean' },
        extensions: { type: 'array', items: extension },
        extendedAgentCard: { type: 'boolean' },
      },
      additionalProperties: false,
    },
    securitySchemes: {
      type: 'object',
      additionalProperties: {
        oneOf: [
          oneofMember('apiKeySecurityScheme', ['location', 'name'], {
            location: { type: 'string' },
            name: { type: 'string' },
          }),
          oneofMember('httpAuthSecurityScheme', ['scheme'], {
            scheme: { type: 'string' },
            bearerFormat: { type: 'string' },
          }),
          oneofMember('oauth2SecurityScheme', ['flows'], {
            flows: { type: 'object' },
            oauth2MetadataUrl: { type: 'string' },
          }),
          oneofMember('openIdConnectSecurityScheme', ['openIdConnectUrl'], { openIdConnectUrl: { type: 'string' } }),
          oneofMember('mtlsSecurityScheme', [], {}),
        ],
      },
    },
    securityRequirements: securityRequirements1_0,
    defaultInputModes: strings,
    defaultOutputModes: strings,
    skills: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'description', 'tags'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          description: { type: 'string' },
          tags: strings,
          examples: strings,
          inputModes: strings,
          outputModes: strings,
          securityRequirements: securityRequirements1_0,
        },
        additionalProperties: false,
      },
    },
    signatures: { type: 'array', items: signature },
    iconUrl: { type: 'string' },
  },
  additionalProperties: false,
} as const;
