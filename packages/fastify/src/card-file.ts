/**
 * The agent card from a JSON file (issue 23: comparable servers build the card from
 * configuration files): read once at `register`, and checked there, so a typo fails the start
 * with the file and the field named rather than serving a broken card.
 */

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AgentCardInput } from './options.js';

const isStringArray = (value: unknown): boolean => Array.isArray(value) && value.every((v) => typeof v === 'string');

/** The card's fields the plugin reads, checked; the problem names the field. */
export function checkCardFields(card: Record<string, unknown>): string | undefined {
  for (const field of ['name', 'description', 'version']) {
    if (typeof card[field] !== 'string' || card[field] === '') return `.${field} must be a non-empty string`;
  }
  for (const field of ['url', 'protocolVersion', 'preferredTransport', 'additionalInterfaces']) {
    if (card[field] !== undefined) return `.${field} is filled in by the plugin; leave it out`;
  }
  for (const field of ['defaultInputModes', 'defaultOutputModes']) {
    if (card[field] !== undefined && !isStringArray(card[field])) return `.${field} must be an array of media types`;
  }
  if (card.skills !== undefined) {
    if (!Array.isArray(card.skills)) return '.skills must be an array of { id, name, description, tags }';
    for (const [i, skill] of (card.skills as unknown[]).entries()) {
      if (skill === null || typeof skill !== 'object')
        return `.skills[${i}] must be an object { id, name, description, tags }`;
      const fields = skill as Record<string, unknown>;
      for (const field of ['id', 'name', 'description']) {
        if (typeof fields[field] !== 'string' || fields[field] === '') {
          return `.skills[${i}].${field} must be a non-empty string`;
        }
      }
      for (const field of ['tags', 'inputModes', 'outputModes', 'examples']) {
        if (fields[field] !== undefined && !isStringArray(fields[field])) {
          return `.skills[${i}].${field} must be an array of strings`;
        }
      }
    }
  }
  if (card.capabilities !== undefined && (card.capabilities === null || typeof card.capabilities !== 'object')) {
    return '.capabilities must be an object ({ extensions })';
  }
  return undefined;
}

/**
 * The card's fields from the JSON file at `path` (relative to the working directory).
 * @throws {Error} naming the file, and the field or the JSON error, e.g.
 *   `file /etc/agent/card.json: .skills[0].name must be a non-empty string`.
 */
export function readCardFile(path: string): AgentCardInput {
  const file = resolve(path);
  if (!/\.json$/i.test(file)) {
    throw new Error(
      `file ${file}: only JSON card files are read (a path ending in .json); for another format, parse it and pass the object`,
    );
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      `file ${file} could not be read (${code ?? (error as Error).message}); check the path, which is relative to the working directory ${process.cwd()}`,
    );
  }
  let card: unknown;
  try {
    card = JSON.parse(text);
  } catch (error) {
    throw new Error(`file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (card === null || typeof card !== 'object' || Array.isArray(card)) {
    throw new Error(`file ${file} must hold a JSON object { name, description, version, … }`);
  }
  const problem = checkCardFields(card as Record<string, unknown>);
  if (problem !== undefined) throw new Error(`file ${file}: ${problem}`);
  return card as AgentCardInput;
}
