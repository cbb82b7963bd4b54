// A person's controls for a TurtleSoup puzzle (§4.5): the surface, the dialogue with the
// responder's Yes / No / Unknown and key-clue marks, one question per turn, /solve, the summary.
// Built only with ui.el: every puzzle, question and answer string becomes a text node.

const TURTLESOUP_SOLVE = "/solve";
const TURTLESOUP_WORDS = {
  en: {
    tutorial: [
      "Read the surface: a strange situation whose hidden story (the bottom) you must recover.",
      "Ask one yes/no question per turn. The host answers Yes, No or Unknown, and marks an " +
        "answer that touches a key point of the story with <Key Clue>.",
      "When you think you know the story (or your questions run out), press “I'm ready to " +
        "solve”, then write your account of the whole story: who did what, and why.",
    ],
    howTo: "How to play (tutorial)",
    surface: "Surface",
    dialogue: "Questions so far",
    none: "(no question yet)",
    question: (turn, max) => `Question ${turn} of ${max}`,
    ask: "Ask",
    placeholder: "Ask one yes/no question, then press Enter",
    solve: "I'm ready to solve (/solve)",
    summaryTitle: "Your summary of the full story",
    summaryHint: "Questioning is over. Write your account of the hidden story (the bottom).",
    summaryPlaceholder: "What really happened, and why?",
    submit: "Submit summary",
    last: "Last answer",
    over: "Puzzle finished",
    empty: "Write something first.",
    sending: "Sending …",
  },
  zh: {
    tutorial: [
      "阅读汤面:一个离奇的情境,你要还原背后隐藏的故事(汤底)。",
      "每轮提一个是非问题;主持人只回答 是 / 否 / 不知道,触及关键点的回答会标上<关键线索>。",
      "觉得已经知道答案(或问题用完)时,点击“开始还原”,然后写出你还原的完整故事。",
    ],
    howTo: "玩法说明",
    surface: "汤面",
    dialogue: "问答记录",
    none: "(还没有提问)",
    question: (turn, max) => `第 ${turn} 问(共 ${max} 问)`,
    ask: "提问",
    placeholder: "提一个是非问题,按回车发送",
    solve: "开始还原 (/solve)",
    summaryTitle: "你还原的汤底",
    summaryHint: "提问结束。请写出你对完整故事(汤底)的总结。",
    summaryPlaceholder: "到底发生了什么?为什么?",
    submit: "提交总结",
    last: "上一个回答",
    over: "本题结束",
    empty: "请先输入内容。",
    sending: "发送中 …",
  },
};
const TURTLESOUP_ANSWER_KIND = { Yes: "ok", No: "bad", Unknown: "muted" };

export function renderPlay(root, state, ui, send) {
  const view = turtlesoupPlayState(state);
  const data = view.data;
  const words = TURTLESOUP_WORDS[data.language === "zh" ? "zh" : "en"];
  const box = ui.el("div", { class: "turtlesoup-play", lang: data.language === "zh" ? "zh" : "en" });
  ui.add(
    box,
    ui.el(
      "details",
      { class: "turtlesoup-tutorial", open: !view.done && (data.turn || 1) === 1 && data.phase !== "summarize" },
      ui.el("summary", null, words.howTo),
      words.tutorial.map((line) => ui.el("p", { class: "small" }, line)),
    ),
  );
  if (data.title) ui.add(box, ui.el("h3", { class: "turtlesoup-title" }, String(data.title)));
  if (data.surface !== undefined) {
    ui.add(box, ui.el("div", { class: "label" }, words.surface), ui.el("div", { class: "turtlesoup-surface" }, ui.textBlock(data.surface)));
  }
  if (!view.done) ui.add(box, turtlesoupDialogue(ui, data, words));
  if (view.feedback && !view.done && data.phase !== "summarize") {
    ui.add(box, ui.el("p", { class: "turtlesoup-feedback" }, ui.el("span", { class: "label" }, `${words.last}: `), view.feedback));
  }
  let input = null;
  if (view.done) {
    ui.add(box, turtlesoupOutcome(ui, view, words));
  } else if (data.phase === "summarize") {
    const [section, summary] = turtlesoupSummary(ui, words, send, view.waiting);
    ui.add(box, section);
    input = summary;
  } else {
    const [section, question] = turtlesoupAsk(ui, data, words, send, view.waiting);
    ui.add(box, section);
    input = question;
  }
  ui.add(root, box);
  // The page is drawn again after every answer: the cursor stays where the next question goes.
  if (input && view.waiting && typeof input.focus === "function") input.focus({ preventScroll: true });
}

// The play state (web/play.py): the observation an agent reads now (its data filtered to what
// the text shows), every step's action and feedback, and whether the episode waits for a move.
function turtlesoupPlayState(state) {
  const s = state || {};
  const observation = s.observation || {};
  const steps = s.history || [];
  const last = steps.length ? steps[steps.length - 1] : null;
  return {
    data: observation.data || {},
    steps,
    // The reply to the last question as the questioner read it ("Yes<Key Clue>", "Invalid
    // question (...)"); /solve and the summary have none.
    feedback: last && last.feedback ? String(last.feedback) : "",
    done: Boolean(s.done),
    waiting: s.waiting !== false,
  };
}

// The dialogue exactly as the questioner reads it: the reply text ("Yes<Key Clue>", "否") as the
// observation renders it, with the answer word coloured.
function turtlesoupDialogue(ui, data, words) {
  const history = data.history || [];
  return ui.el(
    "section",
    { class: "turtlesoup-dialogue", style: { margin: ".5rem 0" } },
    ui.el("div", { class: "label" }, words.dialogue),
    history.length
      ? ui.el(
          "ol",
          { style: { paddingLeft: "2rem", margin: ".2rem 0" } },
          history.map((h) =>
            ui.el(
              "li",
              { value: h.turn, class: h.key_clue ? "turtlesoup-key" : "", style: { margin: ".15rem 0" } },
              ui.el("span", { class: "turtlesoup-question" }, String(h.question)),
              " → ",
              ui.badge(String(h.text ?? h.answer ?? ""), h.key_clue ? "warn" : TURTLESOUP_ANSWER_KIND[h.answer] || "muted"),
            ),
          ),
        )
      : ui.el("p", { class: "muted" }, words.none),
  );
}

// Sends through `send`, locking the given controls while the action is on its way.
function turtlesoupSender(send, controls, status, words, waiting) {
  return (action) => {
    if (!waiting) return;
    const text = String(action || "").trim();
    if (!text) {
      status.textContent = words.empty;
      return;
    }
    for (const c of controls) c.disabled = true;
    status.textContent = words.sending;
    Promise.resolve(send(text)).catch((err) => {
      for (const c of controls) c.disabled = false;
      status.textContent = String(err && err.message ? err.message : err);
    });
  };
}

function turtlesoupAsk(ui, data, words, send, waiting) {
  const controls = [];
  const status = ui.el("div", { class: "small turtlesoup-status", role: "status" });
  const go = turtlesoupSender(send, controls, status, words, waiting);
  const question = ui.el("input", {
    class: "turtlesoup-question-input",
    type: "text",
    maxlength: 400,
    disabled: !waiting,
    placeholder: words.placeholder,
    "aria-label": words.placeholder,
    style: { flex: "1", minWidth: "20rem" },
    onkeydown: (event) => {
      if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        go(question.value);
      }
    },
  });
  const ask = ui.el("button", { class: "primary turtlesoup-ask", disabled: !waiting, onclick: () => go(question.value) }, words.ask);
  const solve = ui.el("button", { class: "turtlesoup-solve", disabled: !waiting, onclick: () => go(TURTLESOUP_SOLVE) }, words.solve);
  controls.push(question, ask, solve);
  const section = ui.el(
    "section",
    { class: "turtlesoup-ask-box" },
    data.turn ? ui.el("div", { class: "label" }, words.question(data.turn, data.max_turns || "?")) : null,
    ui.el("div", { class: "controls" }, question, ask),
    ui.el("div", { class: "controls" }, solve),
    status,
  );
  return [section, question];
}

function turtlesoupSummary(ui, words, send, waiting) {
  const controls = [];
  const status = ui.el("div", { class: "small turtlesoup-status", role: "status" });
  const go = turtlesoupSender(send, controls, status, words, waiting);
  const summary = ui.el("textarea", {
    class: "turtlesoup-summary",
    rows: 8,
    disabled: !waiting,
    // Enter starts a new line of the summary; Ctrl+Enter (Cmd+Enter) sends it.
    onkeydown: (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        go(summary.value);
      }
    },
    placeholder: words.summaryPlaceholder,
    "aria-label": words.summaryTitle,
    style: { width: "100%", boxSizing: "border-box" },
  });
  const submit = ui.el("button", { class: "primary turtlesoup-submit", disabled: !waiting, onclick: () => go(summary.value) }, words.submit);
  controls.push(summary, submit);
  const section = ui.el(
    "section",
    { class: "turtlesoup-summary-box" },
    ui.el("h3", null, words.summaryTitle),
    ui.el("p", { class: "small" }, words.summaryHint),
    summary,
    ui.el("div", { class: "controls" }, submit),
    status,
  );
  return [section, summary];
}

// The end: the questions asked and the summary sent, from the steps (the last observation has
// no dialogue); the judge's evaluation is not shown to the player.
function turtlesoupOutcome(ui, view, words) {
  const steps = view.steps;
  const summary = steps.length ? steps[steps.length - 1] : null;
  const asked = steps.slice(0, -1).filter((s) => s.action !== TURTLESOUP_SOLVE);
  return ui.el(
    "section",
    { class: "turtlesoup-outcome" },
    ui.el("h3", null, words.over),
    ui.el("div", { class: "label" }, words.dialogue),
    asked.length
      ? ui.el(
          "ol",
          { style: { paddingLeft: "2rem", margin: ".2rem 0" } },
          asked.map((s) => ui.el("li", null, ui.el("span", { class: "turtlesoup-question" }, String(s.action)), " → ", ui.badge(String(s.feedback ?? ""), "muted"))),
        )
      : ui.el("p", { class: "muted" }, words.none),
    summary ? ui.el("div", { class: "label" }, words.summaryTitle) : null,
    summary ? ui.textBlock(summary.action) : null,
  );
}
