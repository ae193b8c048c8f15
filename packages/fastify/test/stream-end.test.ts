/**
 * StreamEnd, the light abort signal of a stream (src/context.ts): it keeps a single listener as
 * itself and an array only for more, and calls each listener once, on the first abort.
 */
import { describe, expect, it, vi } from 'vitest';
import { StreamEnd } from '../src/context.js';

describe('StreamEnd', () => {
  it('calls its one listener once, on the first abort', () => {
    const end = new StreamEnd();
    const listener = vi.fn();
    end.addEventListener('abort', listener);
    end.abort();
    end.abort();
    expect(end.aborted).toBe(true);
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('calls several listeners in order, and not the ones removed', () => {
    const end = new StreamEnd();
    const calls: string[] = [];
    const a = () => calls.push('a');
    const b = () => calls.push('b');
    const c = () => calls.push('c');
    end.addEventListener('abort', a);
    end.addEventListener('abort', b);
    end.addEventListener('abort', c);
    end.removeEventListener('abort', b);
    end.abort();
    expect(calls).toEqual(['a', 'c']);
  });

  it('forgets a single listener that is removed, and removing an unknown one does nothing', () => {
    const end = new StreamEnd();
    const listener = vi.fn();
    end.removeEventListener('abort', listener);
    end.addEventListener('abort', listener);
    end.removeEventListener('abort', () => {});
    end.removeEventListener('abort', listener);
    end.abort();
    expect(listener).not.toHaveBeenCalled();
  });

  it('a listener added after the first was removed is still called', () => {
    const end = new StreamEnd();
    const first = vi.fn();
    const second = vi.fn();
    end.addEventListener('abort', first);
    end.addEventListener('abort', second);
    end.removeEventListener('abort', first);
    end.abort();
    expect(first).not.toHaveBeenCalled();
    expect(second).toHaveBeenCalledTimes(1);
  });
});
