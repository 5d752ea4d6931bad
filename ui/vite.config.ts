import { defineConfig } from 'vite';

// Built assets only: the app's CSP applies to them (a dev server URL would bypass it).
export default defineConfig({
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2021', sourcemap: false },
});
