// ESLint (flat config) with typescript-eslint's type-checked rules over every TypeScript file the
// project type-checks. `npm run lint` runs it with --max-warnings 0: a warning fails like an error.
// Formatting is Prettier's job (.prettierrc.json), so no stylistic rule is enabled here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'clients/typescript/dist/', 'bench/results/', 'console/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // The wire is full of control characters on purpose: XML 1.0's forbidden ranges, GSM-7's
      // escape, PHP's trim set. A regex that names them is the rule itself, not a typo.
      'no-control-regex': 'off',
      // Unused on purpose: a parameter named with a leading underscore (one every function of a family
      // takes, e.g. a migration's dialect), and a property a rest pattern leaves out (`{ content, ...rest }`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests read answers off the wire (JSON.parse, res.json()), which are `any` by nature: their
    // assertions, not the types, check the shape. node:test's test()/describe() return promises
    // the runner itself awaits.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        URL: 'readonly',
      },
    },
  },
);
