import { Button } from "@radix-ui/themes";
import { useState } from "react";
import { call, errorMessage } from "./api";
import type { CoordinationReport } from "./bindings/CoordinationReport";
import { coordinationSummary, usd } from "./team";

/** What coordination cost (`baton team report`), read when the lead opens it: it reads every
 *  task's review record, too much to read again at every change of a large board. */
export function CoordinationCost({ onError }: { onError: (message: string | null) => void }) {
  const [report, setReport] = useState<CoordinationReport | null>(null);
  const load = () =>
    call("team_report", { plan: null }).then(
      (r) => {
        setReport(r);
        onError(null);
      },
      (e: unknown) => onError(errorMessage(e)),
    );
  return (
    <details className="coordination" data-testid="coordination" onToggle={(e) => e.currentTarget.open && report === null && void load()}>
      <summary>What coordination cost</summary>
      {report && (
        <>
          <p data-testid="coordination-run">{coordinationSummary(report)}</p>
          <ul>
            {report.roles.map((role) => (
              <li key={role.role}>
                {role.role}: {role.attempts} attempt{role.attempts === 1 ? "" : "s"}, {usd(role.usage.cost_usd)}
                {role.token_share !== null && `, ${Math.round(role.token_share * 100)} % of the tokens`}
              </li>
            ))}
          </ul>
          <table className="coordination-tasks">
            <thead>
              <tr>
                <th scope="col">Task</th>
                <th scope="col">Attempts</th>
                <th scope="col">Rounds (lead + judge)</th>
                <th scope="col">Questions</th>
                <th scope="col">Queue returns</th>
                <th scope="col">Landed</th>
                <th scope="col">Cost</th>
              </tr>
            </thead>
            <tbody>
              {report.tasks.map((t) => (
                <tr key={t.task}>
                  <td>{t.task}</td>
                  <td>{t.attempts}</td>
                  <td>
                    {t.lead_rounds} + {t.judge_rounds}
                  </td>
                  <td>{t.questions}</td>
                  <td>{t.queue_returns}</td>
                  <td>{t.landed ? "yes" : ""}</td>
                  <td>{usd(t.usage.cost_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Button variant="soft" onClick={() => void load()} data-testid="coordination-refresh">
            Read again
          </Button>
        </>
      )}
    </details>
  );
}
