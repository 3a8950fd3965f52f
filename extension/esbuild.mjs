// Bundles the extension into dist/extension.js. The native addon (.node) is never bundled: the
// bootstrap loads it at run time from dist/native/ (where scripts/package.sh puts it) or from the
// in-repo npm/executor package during development.
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
const options = {
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode', '*.node'],
  sourcemap: true,
  minify: !watch,
  logLevel: 'info',
};
if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
