/**
 * The canonical payload of a 1.0 card's signatures (`canonicalCardPayload`, A2A 1.0 §8.4.1) is,
 * byte for byte, the one the official @a2a-js/sdk 1.x computes (`canonicalizeAgentCard`): what
 * either signs, the other verifies. Checked on generated cards full of the cases that differ
 * between "drop the defaults" rules: empty strings, lists and maps, `false` in `optional` and in
 * plain fields, snake_case names, members outside the schema, several OAuth flows (a oneof).
 */

import { canonicalizeAgentCard, type AgentCard as SdkAgentCard } from '@a2a-js/sdk-1';
import { canonicalCardPayload } from '@fastify-a2a/core/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const text = fc.oneof(fc.constant(''), fc.constant('a'), fc.string({ maxLength: 6 }));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const strings = fc.array(text, { maxLength: 3 });
const flow = fc.record(
  {
    authorizationUrl: text,
    tokenUrl: text,
    refreshUrl: text,
    deviceAuthorizationUrl: text,
    scopes: fc.dictionary(fc.string({ maxLength: 4 }), text, { maxKeys: 2 }),
    pkceRequired: fc.boolean(),
  },
  { requiredKeys: [] },
);
const scheme = fc.oneof(
  fc.record({
    apiKeySecurityScheme: fc.record({ location: text, name: text, description: text }, { requiredKeys: [] }),
  }),
  fc.record({ httpAuthSecurityScheme: fc.record({ scheme: text, bearerFormat: text }, { requiredKeys: [] }) }),
  fc.record({
    oauth2SecurityScheme: fc.record(
      {
        description: text,
        oauth2MetadataUrl: text,
        flows: fc.record(
          { authorizationCode: flow, clientCredentials: flow, implicit: flow, password: flow, deviceCode: flow },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({ open_id_connect_security_scheme: fc.record({ open_id_connect_url: text }, { requiredKeys: [] }) }),
  fc.record({ mtlsSecurityScheme: fc.record({ description: text }, { requiredKeys: [] }) }),
  // Both cases set: a oneof keeps the first.
  fc.record({ apiKeySecurityScheme: fc.record({ name: text }), mtlsSecurityScheme: fc.record({ description: text }) }),
);
const requirement = fc.record({
  schemes: fc.dictionary(fc.string({ maxLength: 4 }), fc.record({ list: strings }), { maxKeys: 2 }),
});
const card = fc.record(
  {
    name: text,
    description: text,
    version: text,
    documentationUrl: maybe(text),
    iconUrl: maybe(text),
    provider: fc.record({ url: text, organization: text }, { requiredKeys: [] }),
    supported_interfaces: fc.array(
      fc.record({ url: text, protocolBinding: text, tenant: text, protocol_version: text }, { requiredKeys: [] }),
      { maxLength: 2 },
    ),
    capabilities: fc.record(
      {
        streaming: fc.boolean(),
        pushNotifications: fc.boolean(),
        extended_agent_card: fc.boolean(),
        extensions: fc.array(
          fc.record(
            {
              uri: text,
              description: text,
              required: fc.boolean(),
              params: fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(text, fc.boolean(), fc.integer(), strings), {
                maxKeys: 3,
              }),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 2 },
        ),
        stateTransitionHistory: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
    securitySchemes: fc.dictionary(fc.string({ maxLength: 4 }), scheme, { maxKeys: 2 }),
    securityRequirements: fc.array(requirement, { maxLength: 2 }),
    defaultInputModes: strings,
    default_output_modes: strings,
    skills: fc.array(
      fc.record(
        {
          id: text,
          name: text,
          description: text,
          tags: strings,
          examples: strings,
          inputModes: strings,
          securityRequirements: fc.array(requirement, { maxLength: 1 }),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 2 },
    ),
    signatures: fc.array(fc.record({ protected: text, signature: text }), { maxLength: 1 }),
    // 0.3's members and others outside 1.0's schema: left out by both.
    protocolVersions: strings,
    extra: text,
  },
  { requiredKeys: [] },
);

describe('canonicalCardPayload (1.0 form) matches @a2a-js/sdk 1.x canonicalizeAgentCard', () => {
  it('on generated cards', () => {
    fc.assert(
      fc.property(card, (value) => {
        expect(canonicalCardPayload(value, '1.0')).toBe(canonicalizeAgentCard(value as unknown as SdkAgentCard));
      }),
      { numRuns: 400 },
    );
  });

  it('on the spec’s example card: empty members, even REQUIRED ones, are left out as the SDK leaves them', () => {
    // 1.0 §8.4.1's example keeps `"description": ""` and `"skills": []`; both SDKs drop them.
    const example = {
      name: 'Example Agent',
      description: '',
      capabilities: { streaming: false, pushNotifications: false, extensions: [] },
      skills: [],
    };
    expect(canonicalCardPayload(example)).toBe(
      '{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}',
    );
    expect(canonicalCardPayload(example)).toBe(canonicalizeAgentCard(example as unknown as SdkAgentCard));
  });

  it('a card with 0.3’s `url` keeps every member (the json form)', () => {
    const combined = {
      name: 'A',
      url: 'http://a',
      protocolVersion: '0.3.0',
      skills: [],
      capabilities: { stateTransitionHistory: false },
    };
    expect(canonicalCardPayload(combined)).toBe(
      '{"capabilities":{"stateTransitionHistory":false},"name":"A","protocolVersion":"0.3.0","url":"http://a"}',
    );
  });
});
