// bert_large.h - the gradient tensors of BERT-large, shared by
// gradient_transfer.cu and peer_exchange.cu: 391 tensors, 335,141,888 fp32
// parameters (1.34 GB), in model order.
#pragma once

#include <cstddef>
#include <vector>

#define HIDDEN 1024
#define INTERMEDIATE 4096
#define VOCAB 30522
#define MAX_POSITIONS 512
#define TOKEN_TYPES 2
#define LAYERS 24

// Gradient tensor element counts of BERT-large, in model order.
static std::vector<size_t> bert_large_shapes() {
  const size_t h = HIDDEN, ff = INTERMEDIATE;
  std::vector<size_t> counts;
  counts.push_back((size_t)VOCAB * h);          // word embeddings
  counts.push_back((size_t)MAX_POSITIONS * h);  // position embeddings
  counts.push_back((size_t)TOKEN_TYPES * h);    // token type embeddings
  counts.push_back(h);                          // embedding LayerNorm gamma
  counts.push_back(h);                          // embedding LayerNorm beta
  for (int layer = 0; layer < LAYERS; ++layer) {
    for (int proj = 0; proj < 4; ++proj) {  // Q, K, V, attention output
      counts.push_back(h * h);
      counts.push_back(h);
    }
    counts.push_back(h);       // attention LayerNorm gamma
    counts.push_back(h);       // attention LayerNorm beta
    counts.push_back(h * ff);  // intermediate weight
    counts.push_back(ff);      // intermediate bias
    counts.push_back(ff * h);  // output weight
    counts.push_back(h);       // output bias
    counts.push_back(h);       // output LayerNorm gamma
    counts.push_back(h);       // output LayerNorm beta
  }
  counts.push_back(h * h);  // pooler weight
  counts.push_back(h);      // pooler bias
  return counts;
}
