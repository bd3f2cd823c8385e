import { Bot, GitFork, GitPullRequestArrow, Globe, Inbox, LayoutGrid, Users, type LucideIcon } from "lucide-react";
import { Badge } from "@radix-ui/themes";
import type { View } from "./api";

/** What waits in each view, shown on its entry: the lead sees where to look without opening
 *  every view. */
export interface Waiting {
  /** Questions and approvals agents wait on. */
  questions: number;
  /** Tasks that failed. */
  failed: number;
  /** Done tasks with work on their branch, to review. */
  reviews: number;
}

interface Entry {
  view: View;
  label: string;
  icon: LucideIcon;
  /** The count shown, and what it counts (for screen readers and the tooltip). */
  count?: (w: Waiting) => [number, string];
}

const ENTRIES: Entry[] = [
  { view: "inbox", label: "Inbox", icon: Inbox, count: (w) => [w.questions, "waiting for you"] },
  { view: "team", label: "Team", icon: Users },
  { view: "board", label: "Board", icon: LayoutGrid, count: (w) => [w.failed, "failed"] },
  { view: "review", label: "Review", icon: GitPullRequestArrow, count: (w) => [w.reviews, "to review"] },
  { view: "agents", label: "Agents", icon: Bot },
  { view: "graph", label: "Handoffs", icon: GitFork },
  { view: "browser", label: "Browser", icon: Globe },
];

interface Props {
  view: View;
  waiting: Waiting;
  /** The views this window has (a served page has no browser controls). */
  views: readonly View[];
  onView: (view: View) => void;
}

/** The views: a sidebar on a desk, a tab bar along the bottom on a phone (style.css), each
 *  with an icon and, where something waits in it, a count. The Inbox and the Team come first:
 *  what an agent waits on, and who is working. */
export function Nav({ view, waiting, views, onView }: Props) {
  return (
    <nav className="views" aria-label="Views">
      <span className="brand" aria-hidden="true">
        Baton
      </span>
      <ul>
        {ENTRIES.filter((e) => views.includes(e.view)).map(({ view: v, label, icon: Icon, count }) => {
          const [n, what] = count ? count(waiting) : [0, ""];
          return (
            <li key={v}>
              <button
                data-testid={`view-${v}`}
                aria-pressed={view === v}
                aria-current={view === v ? "page" : undefined}
                onClick={() => onView(v)}
                title={n > 0 ? `${label}: ${n} ${what}` : label}
              >
                <Icon aria-hidden="true" size={18} strokeWidth={2} />
                <span className="label">{label}</span>
                {n > 0 && (
                  <Badge color="amber" variant="solid" radius="full" className="badge" data-testid={`count-${v}`}>
                    {n}
                    <span className="visually-hidden"> {what}</span>
                  </Badge>
                )}
              </button>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
