'use strict';
// What reactotron-react-js (reactotron-core-client) sends from a page, in
// its smallest form: a WebSocket to the Reactotron port, client.intro
// first, then a log. window.reactotronStatus says how the connection went:
// "connecting", "open", or "closed: <code>".
function startReactotron(url) {
  window.reactotronStatus = 'connecting';
  const ws = new WebSocket(url);
  const send = (type, payload) => ws.send(JSON.stringify({ type, payload, important: false, date: new Date().toISOString(), deltaTime: 0 }));
  ws.onopen = () => {
    window.reactotronStatus = 'open';
    send('client.intro', { environment: 'development', name: 'WebShop (Reactotron)', clientId: 'web-check-reactotron',
      reactotronLibraryName: 'reactotron-react-js', platform: 'browser', userAgent: navigator.userAgent });
    send('log', { level: 'debug', message: 'web-check: hello from the Reactotron client' });
  };
  ws.onclose = (e) => {
    window.reactotronStatus = 'closed: ' + e.code;
  };
}
