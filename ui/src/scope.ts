import { createContext, useContext } from "react";

/** Whether this window may do everything the lead can: the desktop always, a served page when
 *  its device was paired as lead. A responder's page hides the rest (starting teams, merging,
 *  editing tasks, "always allow"); the server refuses them whatever the page shows. */
export const LeadContext = createContext(true);

export function useLead(): boolean {
  return useContext(LeadContext);
}
