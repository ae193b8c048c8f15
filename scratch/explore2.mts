import { StateGraph, MessagesAnnotation, MemorySaver, interrupt, Command, START, END } from '@langchain/langgraph';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { AIMessage, HumanMessage } from '@langchain/core/messages';

const model = new FakeListChatModel({ responses: ['Hello there friend'], sleep: 20 });
const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addNode('approve', async (state) => {
    const answer = interrupt('Approve?');
    return { messages: [new AIMessage(`approved: ${JSON.stringify(answer)}`)] };
  })
  .addEdge(START, 'agent').addEdge('agent', 'approve').addEdge('approve', END)
  .compile({ checkpointer: new MemorySaver() });

const config = { configurable: { thread_id: 't1' } };
const run = async (input: unknown, extra = {}) => {
  const out: string[] = [];
  try {
    for await (const [mode, chunk] of await graph.stream(input as never, { ...config, ...extra, streamMode: ['messages', 'updates'] }) as any) {
      out.push(mode === 'messages' ? `m:${chunk[0].constructor.name}:${chunk[0].text}` : `u:${JSON.stringify(chunk)}`);
    }
  } catch (e) { out.push(`ERR ${(e as Error).name}: ${(e as Error).message}`); }
  console.log(out.join(' | ').slice(0, 1500));
  const s = await graph.getState(config);
  console.log('  next', s.next, 'interrupts', JSON.stringify(s.tasks.map(t => t.interrupts)));
};
await run({ messages: [new HumanMessage('hi')] });
console.log('--- new input while interrupted');
await run({ messages: [new HumanMessage('again')] });
console.log('--- resume');
await run(new Command({ resume: 'yes' }));
console.log('--- resume with nothing pending');
await run(new Command({ resume: 'yes' }));
console.log('--- abort');
const ac = new AbortController(); setTimeout(() => ac.abort(new Error('canceled')), 100);
await run({ messages: [new HumanMessage('x')] }, { signal: ac.signal });
console.log((await graph.getState(config)).values.messages.map((m: any) => `${m.constructor.name}:${m.text}`));
