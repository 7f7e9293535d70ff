'use strict';
// Metro's inspector proxy, as Metro and `expo start` mount it: the real
// @react-native/dev-middleware on a loopback HTTP server, its middleware for
// HTTP (/json/list, /json/version, …) and its WebSocket endpoints for the
// upgrades (/inspector/device for apps, /inspector/debug for debuggers).
//
// Run alone: `node proxy.js [port]` prints `proxy listening <port>` once it
// listens (port 0 or none: a free one). Experiments are dev-middleware's
// defaults, as in Metro, unless `experiments` (unstable_experiments) says
// otherwise: with enableStandaloneFuseboxShell false the proxy forces every
// page's supportsMultipleDebuggers to false, as older proxies behave. For a
// manual run, INSPECTOR_EXPERIMENTS (JSON) gives them.
const http = require('node:http');
const { createDevMiddleware } = require('@react-native/dev-middleware');

function startProxy({ port = 0, host = '127.0.0.1', experiments } = {}) {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    server.once('error', reject);
    server.listen(port, host, () => {
      const actual = server.address().port;
      const serverBaseUrl = `http://${host}:${actual}`;
      const logs = [];
      const logger = {
        info: (...a) => logs.push(['info', a]),
        warn: (...a) => logs.push(['warn', a]),
        error: (...a) => { logs.push(['error', a]); console.error('proxy error:', ...a); },
      };
      const { middleware, websocketEndpoints } = createDevMiddleware({
        serverBaseUrl,
        logger,
        unstable_experiments: experiments,
        // Never open a browser or install a shell from a check.
        unstable_toolLauncher: { launchDebuggerAppWindow: async () => {}, launchDebuggerShell: async () => {}, prepareDebuggerShell: async () => ({ code: 'not_implemented' }) },
      });
      server.on('request', (req, res) => middleware(req, res));
      server.on('upgrade', (req, socket, head) => {
        const { pathname } = new URL(req.url, serverBaseUrl);
        const wss = websocketEndpoints[pathname];
        if (!wss) {
          socket.destroy();
          return;
        }
        wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
      });
      resolve({ server, port: actual, serverBaseUrl, logs, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }) });
    });
  });
}

module.exports = { startProxy };

if (require.main === module) {
  const experiments = process.env.INSPECTOR_EXPERIMENTS ? JSON.parse(process.env.INSPECTOR_EXPERIMENTS) : undefined;
  startProxy({ port: Number(process.argv[2] || 0), experiments }).then(({ port }) => {
    console.log(`proxy listening ${port}`);
  }, (err) => {
    console.error('proxy failed to start:', err);
    process.exit(1);
  });
}
