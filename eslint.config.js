// ESLint's flat config: typescript-eslint's type-aware rules (promises that nobody awaits, values
// typed `any` flowing on unchecked) over the TypeScript, and a line length that Prettier leaves to us
// (it wraps code, not comments or strings).
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // Built, installed, downloaded or left by a run (Elasticsearch data, benchmark scratch, a test's typed client).
  { ignores: ['dist/', 'node_modules/', 'data/', '.es/', '.bench/', '.typed-client-*/'] },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Destructuring a property out to leave the rest is how an object loses a key.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      'max-len': ['error', { code: 160, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }],
    },
  },
  { files: ['**/*.js'], extends: [tseslint.configs.disableTypeChecked] },
);
