// Expo's own Metro configuration for this small app, with two changes for a
// check that runs the bundle in Node instead of on a phone: the packages are
// installed once in .ci/expo/node_modules, above the project, so that folder
// is watched too; and React Native's InitializeCore (which needs the native
// side) is not run before the app's entry.
const path = require('node:path');
const { getDefaultConfig } = require('expo/metro-config');

const config = getDefaultConfig(__dirname);
config.watchFolders = [...(config.watchFolders || []), path.resolve(process.env.EXPO_CHECK_MODULES || path.join(__dirname, '..', '..', 'node_modules'))];
config.serializer.getModulesRunBeforeMainModule = () => [];
config.resolver.useWatchman = false;
config.watcher = { ...config.watcher, healthCheck: { enabled: false } };
config.maxWorkers = 1;
module.exports = config;
