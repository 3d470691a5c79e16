// Call the pure elicitation builders a real Claude ACP bridge ships.
//
//   node bridge_elicitation.mjs <package dir>   < calls.json   > results.json
//
// <package dir> is an installed @agentclientprotocol/claude-agent-acp (the
// folder holding its package.json). stdin holds one call or a JSON list of
// calls; stdout gets one result or the list of results, in order.
//
//   {"op": "create", "toolInput": {...}, "sessionId": "s", "toolCallId": "t", "airClient": false}
//       -> askUserQuestionsToCreateRequest(extractAskUserQuestions(toolInput), ...):
//          the elicitation/create params the bridge sends for that tool call
//   {"op": "apply", "response": {...}, "toolInput": {...}, "questions": [...], "options": {...}}
//       -> applyAskElicitationResponse(response, toolInput, questions, options):
//          what the AskUserQuestion tool receives, `answers` being what the
//          model is told; `questions` defaults to extractAskUserQuestions(toolInput)
//   {"op": "version"} -> the package's version
//
// Both functions are exactly the ones the bridge runs between the tool call
// and elicitation/create, and between the client's answer and the tool.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const packageDir = process.argv[2];
if (!packageDir) {
  process.stderr.write("usage: node bridge_elicitation.mjs <package dir> < calls.json\n");
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
const bridge = await import(pathToFileURL(join(packageDir, "dist", "elicitation.js")).href);

function call(request) {
  switch (request.op) {
    case "version":
      return manifest.version;
    case "create": {
      const questions = bridge.extractAskUserQuestions(request.toolInput);
      if (questions === null) return null;
      // 0.65.0's builder takes three arguments; a fourth is ignored there.
      return bridge.askUserQuestionsToCreateRequest(
        questions,
        request.sessionId,
        request.toolCallId,
        request.airClient ?? false,
      );
    }
    case "apply": {
      const questions = request.questions ?? bridge.extractAskUserQuestions(request.toolInput);
      return bridge.applyAskElicitationResponse(request.response, request.toolInput, questions, request.options ?? {});
    }
    default:
      throw new Error(`unknown op ${JSON.stringify(request.op)}`);
  }
}

const input = JSON.parse(readFileSync(0, "utf8"));
const output = Array.isArray(input) ? input.map(call) : call(input);
process.stdout.write(JSON.stringify(output) + "\n");
