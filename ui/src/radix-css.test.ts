import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import postcss from "postcss";
import { describe, expect, it } from "vitest";
import { USED_RADIX, onlyUsedRadix } from "../radix-css";

const THEMES = join(__dirname, "../node_modules/@radix-ui/themes");

describe("the theme's stylesheet, cut to what the UI draws", () => {
  it("names every Radix component the UI imports", () => {
    const imported = new Set<string>();
    for (const file of readdirSync(__dirname).filter((f) => f.endsWith(".tsx"))) {
      const source = readFileSync(join(__dirname, file), "utf8");
      for (const m of source.matchAll(/import \{([^}]*)\} from "@radix-ui\/themes"/g)) {
        for (const name of (m[1] ?? "").split(",")) imported.add(name.trim());
      }
    }
    imported.delete("Theme");
    expect(imported.size).toBeGreaterThan(0);
    for (const name of imported) expect(USED_RADIX.some((used) => used.startsWith(name)), name).toBe(true);
  });

  it("keeps the used components' rules and drops the others and the screen-size variants", async () => {
    const from = join(THEMES, "components.css");
    const css = readFileSync(from, "utf8");
    const cut = (await postcss([onlyUsedRadix()]).process(css, { from })).css;
    expect(cut.length).toBeLessThan(css.length / 3);
    expect(cut).toContain(".rt-Button");
    expect(cut).toContain(".rt-TextFieldInput");
    expect(cut).toContain(".rt-BaseDialogOverlay");
    expect(css).toContain(".rt-SelectTrigger");
    expect(cut).not.toContain(".rt-SelectTrigger");
    expect(css).toContain("xs\\:rt-r-size");
    expect(cut).not.toContain("xs\\:rt-r-size");
  });
});
