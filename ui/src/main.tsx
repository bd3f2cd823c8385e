import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Theme } from "@radix-ui/themes";
// The theme's parts this UI uses (its whole stylesheet is twice the size): the tokens, the
// colour scales named here or in style.css, and the components. No layout utilities: layout
// is style.css's.
import "@radix-ui/themes/tokens/base.css";
import "@radix-ui/themes/tokens/colors/slate.css";
import "@radix-ui/themes/tokens/colors/blue.css";
import "@radix-ui/themes/tokens/colors/red.css";
import "@radix-ui/themes/tokens/colors/green.css";
import "@radix-ui/themes/tokens/colors/amber.css";
import "@radix-ui/themes/tokens/colors/indigo.css";
import "@radix-ui/themes/tokens/colors/purple.css";
import "@radix-ui/themes/components.css";
import { App } from "./App";
import { DARK, useMedia } from "./media";
import "./style.css";

/** One theme (Radix Themes: its components, colours and spacing) for light and dark, following
 *  the system's choice as it changes. */
function Themed() {
  const dark = useMedia(DARK);
  return (
    <Theme appearance={dark ? "dark" : "light"} accentColor="indigo" grayColor="slate" radius="medium" panelBackground="solid">
      <App />
    </Theme>
  );
}

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <Themed />
    </StrictMode>,
  );
}
