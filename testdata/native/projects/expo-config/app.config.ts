import { ExpoConfig } from 'expo/config';

// package: "com.example.commented"
const config: ExpoConfig = {
  name: 'shop',
  slug: 'shop',
  ios: { bundleIdentifier: process.env.IOS_ID ?? 'com.example.fallback' },
  android: {
    package: 'com.example.config.shop',
  },
};

export default config;
