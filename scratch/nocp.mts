import { StateGraph, MessagesAnnotation, interrupt, START, END } from '@langchain/langgraph';
const g = new StateGraph(MessagesAnnotation).addNode('a', () => { interrupt('q'); return {}; }).addEdge(START, 'a').addEdge('a', END).compile();
try { for await (const c of await g.stream({ messages: [] }, { configurable: { thread_id: 'x' }, streamMode: ['updates'] })) console.log(JSON.stringify(c)); } catch (e) { console.log('ERR', (e as Error).message); }
try { console.log(await g.getState({ configurable: { thread_id: 'x' } })); } catch (e) { console.log('ERR getState', (e as Error).message); }
