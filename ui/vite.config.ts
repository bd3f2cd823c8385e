import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";
import { onlyUsedRadix } from "./radix-css";

export default defineConfig({
  plugins: [react()],
  css: { postcss: { plugins: [onlyUsedRadix()] } },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  test: { environment: "node" },
});
