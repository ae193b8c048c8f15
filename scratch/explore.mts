import { StateGraph, MessagesAnnotation, MemorySaver, interrupt, Command, START, END } from '@langchain/langgraph';
import { FakeListChatModel, FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { AIMessage } from '@langchain/core/messages';

const model = new FakeListChatModel({ responses: ['Hello there friend, how are you'], sleep: 5 });
const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state, config) => {
    const reply = await model.invoke(state.messages, config);
    return { messages: [reply] };
  })
  .addNode('approve', async (state) => {
    const answer = interrupt({ question: 'Approve?' });
    return { messages: [new AIMessage(`approved: ${JSON.stringify(answer)}`)] };
  })
  .addEdge(START, 'agent').addEdge('agent', 'approve').addEdge('approve', END)
  .compile({ checkpointer: new MemorySaver() });

const config = { configurable: { thread_id: 't1' } };
for await (const chunk of await graph.stream({ messages: [{ role: 'user', content: 'hi' }] }, { ...config, streamMode: ['messages', 'updates'] })) {
  console.log(JSON.stringify(chunk).slice(0, 400));
}
const state = await graph.getState(config);
console.log('next', state.next, 'tasks', JSON.stringify(state.tasks));
for await (const chunk of await graph.stream(new Command({ resume: 'yes' }), { ...config, streamMode: ['messages', 'updates'] })) {
  console.log(JSON.stringify(chunk).slice(0, 400));
}
