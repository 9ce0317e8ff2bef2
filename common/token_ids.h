/* token_ids.h — the token ids the model itself gives a meaning to:
 * padding (ignored by the loss), <s> (the first decoder input) and </s>
 * (ends an output).  Every vocabulary reserves them (tokenizer/vocab.h)
 * and the model relies on them (model/arch.h includes this), so they live
 * below both: the tokenizer includes nothing from model/, the model
 * nothing from tokenizer/.  Constants only. */
#ifndef TRANSLATE_TOKEN_IDS_H
#define TRANSLATE_TOKEN_IDS_H

enum { TOKEN_PAD = 0, TOKEN_BOS = 2, TOKEN_EOS = 3 };

#endif
