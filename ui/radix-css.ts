import type { Plugin } from "postcss";

/** The Radix Themes parts the UI draws (their class names after `rt-`): the rest of the
 *  theme's stylesheet is left out of the build, so the window parses and matches only rules
 *  that can apply (the whole stylesheet is 420 KB; the first paint paid for it). A component
 *  added to the UI adds its names here; `radix-css.test.ts` checks every component the UI
 *  imports is named. */
export const USED_RADIX = [
  "BaseButton",
  "Button",
  "TextFieldRoot",
  "TextFieldInput",
  "TextFieldSlot",
  "TextAreaRoot",
  "TextAreaInput",
  "BaseCheckboxRoot",
  "BaseCheckboxIndicator",
  "CheckboxRoot",
  "Badge",
  "CalloutRoot",
  "CalloutIcon",
  "CalloutText",
  "BaseDialogOverlay",
  "BaseDialogScroll",
  "BaseDialogScrollPadding",
  "BaseDialogContent",
  "DialogContent",
  "Text",
  "Heading",
];

/** A PostCSS plugin that keeps, of the theme's stylesheet, the rules of `used` components and
 *  the rules of no component (the theme's root, its reset), without the variants by screen
 *  size (`xs:`, `md:`…), which the UI never asks for. */
export function onlyUsedRadix(used: readonly string[] = USED_RADIX): Plugin {
  const keep = new Set(used);
  const wanted = (selector: string) => {
    if (/\\:rt-/.test(selector)) return false;
    const names = [...selector.matchAll(/\.rt-([A-Z]\w*)/g)].map((m) => m[1] ?? "");
    return names.every((name) => keep.has(name));
  };
  return {
    postcssPlugin: "baton-only-used-radix",
    Rule(rule) {
      if (!rule.source?.input.file?.includes("@radix-ui/themes")) return;
      const kept = rule.selectors.filter(wanted);
      if (kept.length === 0) rule.remove();
      else if (kept.length < rule.selectors.length) rule.selectors = kept;
    },
    AtRuleExit(at) {
      if (at.nodes?.length === 0) at.remove();
    },
  };
}
