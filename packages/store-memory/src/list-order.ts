import type { TaskListCursor } from '@fastify-a2a/core';

/** Negative when `a` comes first in listTasks order: newer status timestamp, then greater task id. */
export function listOrder(a: TaskListCursor, b: TaskListCursor): number {
  if (a.statusTimestamp !== b.statusTimestamp) return a.statusTimestamp > b.statusTimestamp ? -1 : 1;
  return compareCodePoints(b.taskId, a.taskId);
}

/**
 * Compares strings by code point, the order of their UTF-8 bytes, which is how the SQL stores
 * compare task ids. JavaScript's `<` compares UTF-16 code units instead, and puts U+E000–U+FFFF
 * after the surrogate pairs of U+10000 and above: shift those two ranges past each other first.
 */
function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
