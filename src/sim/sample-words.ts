// Word lists that sampleText() and OutputText build synthetic prompts and replies from: common English
// words and Chinese words in a customer-support register (the platform's main workload).

/** Common English words, weighted towards prose and technical writing; lower case. */
export const ENGLISH_WORDS: readonly string[] = (
  "the of and to a in is it you that he was for on are with as his they be at one have this from " +
  "or had by hot but some what there we can out other were all your when up use word how said an " +
  "each she which do their time if will way about many then them would write like so these her long " +
  "make thing see him two has look more day could go come did my sound no most number who over know " +
  "water than call first people may down side been now find any new work part take get place made " +
  "live where after back little only round man year came show every good me give our under name very " +
  "through just form much great think say help low line before turn cause same mean differ move right " +
  "boy old too does tell sentence set three want air well also play small end put home read hand port " +
  "large spell add even land here must big high such follow act why ask men change went light kind off " +
  "need house picture try us again animal point mother world near build self earth father head stand " +
  "own page should country found answer school grow study still learn plant cover food sun four " +
  "thought let keep eye never last door between city tree cross since hard start might story saw far " +
  "sea draw left late run while press close night real life few stop open seem together next white " +
  "children begin got walk example ease paper often always music those both mark book letter until " +
  "mile river car feet care second group carry took rain eat room friend began idea fish mountain north " +
  "once base hear horse cut sure watch color face wood main enough plain girl usual young ready above " +
  "ever red list though feel talk bird soon body dog family direct pose leave song measure state " +
  "product black short numeral class wind question happen complete ship area half rock order fire south " +
  "problem piece told knew pass farm top whole king size heard best hour better true during hundred " +
  "request server client cache token model memory latency queue router gateway prompt response batch " +
  "stream budget tenant version cluster replica endpoint metric request timeout retry policy adapter " +
  "decode prefill throughput capacity schedule priority config deploy service traffic health status " +
  "error limit window buffer engine worker thread process network storage record message header field " +
  "value default option feature release update support customer account system design simple faster " +
  "slower higher lower average median percentile estimate measure compare result report summary " +
  "because however therefore although instead without within across against around behind beyond " +
  "usually quickly exactly probably already actually directly currently typically generally"
).split(" ");

/** Chinese words in a customer-support register: greetings, orders, logistics, refunds, apologies. */
export const CHINESE_WORDS: readonly string[] = (
  "您好 请问 有什么 可以 帮您 的 吗 我 你 他 我们 您 这个 那个 订单 编号 商品 物流 快递 包裹 " +
  "发货 已经 还没 收到 什么时候 到达 地址 修改 电话 联系 客服 售后 退款 退货 换货 申请 审核 处理 " +
  "结果 通知 短信 系统 显示 状态 更新 查询 一下 稍等 马上 帮您 核实 确认 信息 问题 原因 情况 说明 " +
  "非常 抱歉 给您 带来 不便 感谢 耐心 等待 理解 支持 配合 谢谢 不客气 好的 明白 了解 知道 需要 " +
  "提供 照片 凭证 截图 描述 质量 损坏 破损 缺少 配件 颜色 尺寸 型号 不对 不符 规格 价格 优惠 " +
  "优惠券 积分 会员 活动 满减 折扣 补偿 赔偿 运费 险 金额 原路 返回 账户 余额 银行卡 支付宝 微信 " +
  "工作日 小时 今天 明天 昨天 上午 下午 晚上 预计 大概 左右 之内 以后 之前 已 将 会 能 要 想 " +
  "可能 应该 必须 尽快 及时 立即 重新 再次 继续 一直 还是 但是 因为 所以 如果 那么 或者 而且 " +
  "然后 另外 其实 目前 现在 刚才 之后 方面 部门 仓库 配送 站点 快递员 派送 签收 拒收 代收 " +
  "丢失 延迟 超时 异常 投诉 反馈 建议 意见 满意 评价 服务 态度 专员 主管 升级 跟进 记录 " +
  "工单 备注 登记 安排 上门 取件 寄回 包装 完好 发票 开具 抬头 税号 邮箱 电子 纸质 " +
  "安装 使用 说明书 保修 维修 检测 更换 新品 故障 无法 开机 充电 屏幕 声音 网络 连接 " +
  "设置 登录 密码 验证码 绑定 解绑 手机号 注册 实名 认证 身份证 资料 上传 成功 失败 " +
  "操作 步骤 页面 点击 选择 提交 取消 关闭 打开 进入 查看 详情 列表 按钮 选项 客户 " +
  "用户 顾客 亲 麻烦 方便 告诉 一个 两个 几天 多久 怎么 为什么 哪里 是否 是 不是 有 没有 " +
  "在 和 与 对 把 被 给 从 到 也 都 就 还 又 很 太 更 最 再 才 只 这样 那样 一样 这边 那边 " +
  "规定 流程 标准 范围 期限 时效 有效 无效 恢复 正常 解决 处理中 已完成 待发货 运输中 派送中"
).split(" ");

/** Speaker labels for the synthetic Chinese support transcripts. */
export const CHINESE_SPEAKERS: readonly string[] = ["用户：", "客服："];
