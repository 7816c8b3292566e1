// Pins the simulated tokenizer's contract: realistic chars/token on English and Chinese, prefix
// stability at hard boundaries, determinism, id ranges, special markers and sampleText's accuracy.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "./rng.js";
import { sampleText } from "./sample-text.js";
import {
  countTokens,
  END_MARKER,
  END_TOKEN_ID,
  isStandaloneCjk,
  SPECIAL_TOKEN_BASE,
  START_MARKER,
  START_TOKEN_ID,
  tokenize,
  tokenPieces,
  VOCAB_SIZE,
} from "./tokenizer.js";

const ENGLISH_PROSE = `When a request arrives at the gateway, the first thing we do is estimate how much work it will create for the inference engine. A chat completion is not a single unit of cost: the prompt has to be processed in the prefill phase, which is compute bound and scales with the number of input tokens, and the reply is produced one token at a time in the decode phase, which is bound by memory bandwidth and by how many other sequences share the same batch. Two requests with the same number of bytes can therefore differ by an order of magnitude in the time they occupy a GPU.

The router uses three signals to choose an endpoint. The first is queue depth, reported by each vLLM replica through its metrics endpoint every few hundred milliseconds. The second is the fraction of the KV cache that is currently in use; a replica whose cache is nearly full will have to preempt running sequences, which throws away work and hurts tail latency. The third is prefix affinity: if a replica has recently served a conversation with the same system prompt and history, the blocks for that prefix are probably still cached, and sending the next turn there saves most of the prefill.

These signals disagree more often than you might expect. A replica with a warm cache for a long conversation may also be the busiest one, because long conversations tend to cluster on the replicas that served them first. We combine the scores with weights that come from configuration, and we record every decision together with the score of each candidate, so that an operator who asks why a request went to a particular replica can get a precise answer instead of a guess.

Token budgets are enforced per tenant. Each tenant has a limit on tokens per minute and a separate limit on concurrent requests. The limiter charges the estimated prompt tokens when the request is admitted and reconciles the charge with the usage reported by the engine when the response completes. Because the estimate is made before the request is forwarded, it must be fast and reasonably accurate; an estimate that is consistently too low lets a tenant exceed its budget, while one that is too high rejects legitimate traffic.

Streaming responses complicate accounting. The client may disconnect halfway through, in which case the gateway cancels the upstream request and charges only the tokens that were actually generated. If the upstream connection fails instead, the gateway can retry on another replica, but only before the first byte has been sent to the client; after that point a retry would duplicate output. Timeouts are configured separately for the time to first token and for the gap between tokens, because a healthy replica under heavy load can take several seconds to start a long prompt but should then produce tokens steadily.

Model versions are rolled out gradually. A new version is first deployed alongside the old one and receives a small share of traffic, chosen by a stable hash of the conversation identifier so that every turn of a conversation sees the same version. If the error rate or the latency of the new version exceeds the thresholds in the rollout policy, the share is reduced automatically and an alert is raised. Adapters trained with LoRA are handled in the same way, except that an adapter can only be served by replicas that have loaded it, which adds another constraint to endpoint selection.`;

const CHINESE_SUPPORT_CHAT = `用户：你好，我上周五在你们店里买了一台空气净化器，订单号是二零二四一一零八三三五七，到现在物流信息一直显示在运输中，已经快一个星期没有更新了，请问是怎么回事？
客服：您好，非常抱歉让您久等了。我这边马上帮您查询一下订单的物流情况，请您稍等一两分钟。
客服：感谢您的耐心等待。经过核实，您的包裹目前停留在华东分拨中心，由于前几天仓库系统升级，部分包裹的扫描记录没有及时上传，所以物流页面没有显示最新的状态。我已经联系了快递公司的专员，对方答复包裹今天下午会重新发出，预计明天或者后天可以送达。
用户：可是我下周一就要出差了，如果周日之前还收不到怎么办？家里有老人和小孩，我买这个就是为了赶紧用上的。
客服：完全理解您的心情，给您带来不便真的很抱歉。我这边已经给您的订单加急处理，并且备注了希望周日之前送达。如果周六晚上八点之前您还没有收到包裹，您可以直接在订单页面申请退款，或者联系我们，我们会优先为您从就近的仓库重新发一台新的，原来的包裹到了之后您拒收就可以，不会产生任何额外费用。
用户：那运费怎么算？另外我看到你们现在有满减活动，我下单的时候还没有，能不能把差价退给我？
客服：运费这边是全部由我们承担的，您不用担心。关于价格的问题，您的订单是十一月八号下的，当时的成交价是一千二百九十九元，目前活动价是一千一百九十九元，符合我们的价格保护规则，差价一百元可以申请补偿。我现在就帮您提交价保申请，审核通过以后，款项会在一到三个工作日内原路退回到您的支付账户。
用户：好的，那我需要提供什么材料吗？
客服：不需要您提供额外的材料，系统会自动比对订单价格和当前活动价格。申请提交成功以后，您会收到一条短信通知，里面有申请编号，您可以在我的订单里面点击价格保护查看处理进度。
用户：还有一个问题，这台净化器的滤网多久需要更换一次？在哪里可以买到原装的滤网？
客服：一般情况下，建议您每六个月更换一次滤网，如果您所在的地区空气质量比较差，或者家里有宠物，可以适当缩短到四个月左右。机器上的滤网指示灯变成红色的时候，也说明需要更换了。原装滤网可以在我们的官方旗舰店直接购买，购买时请选择和您的型号对应的规格，如果不确定的话，可以把机器底部的铭牌拍照发给我们，我们帮您确认。
用户：明白了。如果机器用了一段时间出现故障，保修是怎么规定的？
客服：这款产品整机保修一年，电机保修三年。在保修期内，如果是非人为原因造成的质量问题，我们提供免费上门维修或者更换服务。您只需要保留好购买凭证，出现问题时联系售后客服登记，我们会安排附近的服务网点在四十八小时内和您联系，约定上门检测的时间。
用户：好的，谢谢你，今天解决了我好几个问题。
客服：不客气，这是我们应该做的。稍后系统会给您发送一份服务评价，如果您对这次的服务满意，麻烦您抽空给个好评。后续包裹的配送情况我也会持续跟进，有任何新的消息会第一时间通知您。祝您生活愉快，再见！
用户：再见。`;

/** A bit of everything: code, numbers, markers, mixed scripts, emoji, odd whitespace. */
const MIXED = [
  START_MARKER + "system\nYou are a helpful assistant." + END_MARKER + "\n",
  START_MARKER + "user\n订单号 A1234567，金额 ¥1,299.00，请在 2024-11-08 之前处理 😀👍🏽。",
  "const x = foo(bar, 42) >= 3.14159 ? \"ok\" : 'no'; // <|not a marker|> <|end\n",
  "\tIndented\r\n\r\n\n\n\n  two  spaces   three    four\u00a0nbsp   \n",
  "Übermäßig lange Wörter wie Donaudampfschifffahrtsgesellschaft, naïve café, Привет мир. ",
  "internationalization antidisestablishmentarianism counterrevolutionaries",
  "日本語のテキストと한국어 텍스트も混ざる。" + END_MARKER,
].join("");

function startsWith(whole: Uint32Array, prefix: Uint32Array): boolean {
  if (prefix.length > whole.length) return false;
  for (let i = 0; i < prefix.length; i++) if (whole[i] !== prefix[i]) return false;
  return true;
}

function isLetter(ch: string | undefined): boolean {
  return (
    ch !== undefined &&
    /\p{L}/u.test(ch) &&
    !/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(ch)
  );
}

/** Token boundaries of the whole text that are not inside a Latin word (long words split by hash). */
function stableCuts(text: string): number[] {
  const cuts: number[] = [];
  let at = 0;
  for (const p of tokenPieces(text)) {
    at += p.length;
    if (at < text.length && !(isLetter(text[at - 1]) && isLetter(text[at]))) cuts.push(at);
  }
  return cuts;
}

function charsPerToken(text: string): number {
  return text.length / countTokens(text);
}

describe("tokenizer", () => {
  it("gives English prose about 4.2-4.6 characters per token", () => {
    assert.ok(ENGLISH_PROSE.length > 3000);
    const ratio = charsPerToken(ENGLISH_PROSE);
    assert.ok(ratio >= 4.2 && ratio <= 4.6, `en chars/token ${ratio}`);
  });

  it("gives Chinese customer-support text about 1.2-1.4 characters per token", () => {
    assert.ok(Buffer.byteLength(CHINESE_SUPPORT_CHAT) > 3000);
    const ratio = charsPerToken(CHINESE_SUPPORT_CHAT);
    assert.ok(ratio >= 1.2 && ratio <= 1.4, `zh chars/token ${ratio}`);
  });

  it("splits pieces like a BPE tokenizer: words carry their leading space, digits go by three", () => {
    assert.deepEqual(tokenPieces("Hello world, it's 12345!"), [
      "Hello",
      " world",
      ",",
      " it",
      "'",
      "s",
      " ",
      "123",
      "45",
      "!",
    ]);
    assert.deepEqual(tokenPieces("a\n\n\nb"), ["a", "\n\n", "\n", "b"]);
    assert.deepEqual(tokenPieces("x   y"), ["x", "  ", " y"]);
    assert.equal(tokenPieces("😀").length, 2, "astral characters cost two tokens");
    assert.ok(tokenPieces(" internationalization").length >= 3, "long words are split");
  });

  it("pieces concatenate back to the text and agree with tokenize and countTokens", () => {
    for (const text of [ENGLISH_PROSE, CHINESE_SUPPORT_CHAT, MIXED, "", " ", "\n"]) {
      const pieces = tokenPieces(text);
      assert.equal(pieces.join(""), text);
      assert.equal(pieces.length, countTokens(text));
      assert.equal(tokenize(text).length, countTokens(text));
      assert.ok(pieces.every((p) => p.length > 0));
    }
  });

  it("agrees with itself on random strings from a mixed alphabet", () => {
    const alphabet = [..."ab Z9.,<|>\n\t 你好订单的。，😀é"].concat([
      START_MARKER,
      END_MARKER,
      "<|start",
      "|>",
    ]);
    const random = seededRandom(7);
    for (let n = 0; n < 300; n++) {
      let text = "";
      const len = Math.floor(random() * 40);
      for (let j = 0; j < len; j++) text += alphabet[Math.floor(random() * alphabet.length)];
      assert.equal(tokenPieces(text).join(""), text);
      assert.equal(tokenize(text).length, countTokens(text));
    }
  });

  it("is deterministic and maps equal pieces to equal ids", () => {
    assert.deepEqual(tokenize(MIXED), tokenize(MIXED));
    const ids = tokenize(" the cat and the dog");
    assert.equal(ids[0], ids[3]);
    assert.notEqual(ids[1], ids[4]);
  });

  it("keeps ordinary ids below the special range and every id inside the vocabulary", () => {
    for (const text of [ENGLISH_PROSE, CHINESE_SUPPORT_CHAT, MIXED]) {
      const ids = tokenize(text);
      const pieces = tokenPieces(text);
      ids.forEach((id, i) => {
        assert.ok(id < VOCAB_SIZE);
        if (pieces[i] !== START_MARKER && pieces[i] !== END_MARKER) assert.ok(id < SPECIAL_TOKEN_BASE);
      });
    }
  });

  it("turns each chat marker into exactly one special token", () => {
    assert.deepEqual([...tokenize(START_MARKER)], [START_TOKEN_ID]);
    assert.deepEqual([...tokenize(END_MARKER)], [END_TOKEN_ID]);
    assert.deepEqual(tokenPieces("hi <|end|>"), ["hi", " ", END_MARKER]);
    assert.deepEqual(tokenPieces("<|start"), ["<", "|", "start"]);
    assert.deepEqual(tokenPieces("<<|end|>"), ["<", END_MARKER]);
  });

  it("is prefix-stable at every token boundary outside a word", () => {
    for (const text of [ENGLISH_PROSE, CHINESE_SUPPORT_CHAT, MIXED]) {
      const whole = tokenize(text);
      for (const cut of stableCuts(text)) {
        assert.ok(
          startsWith(whole, tokenize(text.slice(0, cut))),
          `cut ${cut}: ${JSON.stringify(text.slice(cut - 10, cut + 10))}`,
        );
      }
    }
  });

  it("is prefix-stable at hard boundaries chosen at random: before whitespace, after newlines and punctuation", () => {
    const random = seededRandom(42);
    const texts = [
      ENGLISH_PROSE,
      CHINESE_SUPPORT_CHAT,
      MIXED,
      sampleText("en", 3000, 5),
      sampleText("zh", 3000, 5),
    ];
    const isSpace = (ch: string | undefined) => ch !== undefined && /\s/.test(ch);
    const isPunct = (ch: string | undefined) =>
      ch !== undefined && /[\p{P}]/u.test(ch) && ch !== "<" && ch !== "|";
    let checked = 0;
    for (const text of texts) {
      const whole = tokenize(text);
      for (let n = 0; n < 1500; n++) {
        const cut = 1 + Math.floor(random() * (text.length - 1));
        const before = text[cut - 1];
        const after = text[cut];
        const hard =
          (isSpace(after) && !isSpace(before)) ||
          (before === "\n" && after !== "\n" && after !== "\r") ||
          (isPunct(before) && !text.slice(0, cut).endsWith("<|")) ||
          /[，。？！：]/.test(after ?? "");
        if (!hard || text.slice(cut - 8, cut + 8).includes("<|")) continue;
        checked++;
        assert.ok(
          startsWith(whole, tokenize(text.slice(0, cut))),
          `cut ${cut}: ${JSON.stringify(text.slice(cut - 10, cut + 10))}`,
        );
      }
    }
    assert.ok(checked > 1000, `only ${checked} hard boundaries sampled`);
  });

  it("never merges a standalone CJK character with the character after it", () => {
    const standalone = [
      ..."您好请问订单退款物流客服已经发货地址修改快递收到商品质量问题申请处理感谢耐心等待",
    ].filter((ch) => isStandaloneCjk(ch.charCodeAt(0)));
    assert.ok(standalone.length > 5);
    for (const a of standalone) {
      for (const b of CHINESE_SUPPORT_CHAT.slice(0, 300)) assert.equal(countTokens(a + b), 2, a + b);
    }
  });
});

describe("sampleText", () => {
  for (const lang of ["en", "zh"] as const) {
    it(`hits the requested token count within 3% (${lang})`, () => {
      for (const target of [100, 2_800, 52_000]) {
        for (const seed of [1, 2, 3]) {
          const n = countTokens(sampleText(lang, target, seed));
          assert.ok(Math.abs(n - target) <= target * 0.03, `${lang} target ${target} seed ${seed}: ${n}`);
        }
      }
    });

    it(`is deterministic per seed and varies across seeds (${lang})`, () => {
      assert.equal(sampleText(lang, 500, 9), sampleText(lang, 500, 9));
      assert.notEqual(sampleText(lang, 500, 9), sampleText(lang, 500, 10));
    });
  }

  it("reads like its language: realistic characters per token", () => {
    const en = charsPerToken(sampleText("en", 5_000, 1));
    const zh = charsPerToken(sampleText("zh", 5_000, 1));
    assert.ok(en >= 4.0 && en <= 4.8, `en ${en}`);
    assert.ok(zh >= 1.15 && zh <= 1.45, `zh ${zh}`);
    assert.match(sampleText("zh", 200, 1), /^用户：[^\n]+[。？！]/);
  });
});
