// Metro serving this folder as a React Native project would be served:
// the real /symbolicate, and a /status that names the project root as the
// React Native community CLI's does (plain Metro has no /status).
const path = require('node:path');

module.exports = {
  projectRoot: __dirname,
  watchFolders: [],
  resetCache: true,
  maxWorkers: 1,
  reporter: { update() {} }, // no banner or progress bars in CI's log
  resolver: { useWatchman: false },
  watcher: { healthCheck: { enabled: false } },
  server: {
    enhanceMiddleware: (middleware) => (req, res, next) => {
      if (req.url === '/status') {
        res.setHeader('Project-Root', path.resolve(__dirname));
        res.end('packager-status:running');
        return;
      }
      return middleware(req, res, next);
    },
  },
};
