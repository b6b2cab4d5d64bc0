#include "jsoncount.h"

#include <jansson.h>

static int keys(json_t *value) {
  int total = 0;
  if (json_is_object(value)) {
    const char *key;
    json_t *item;
    json_object_foreach(value, key, item) { total += 1 + keys(item); }
  } else if (json_is_array(value)) {
    size_t index;
    json_t *item;
    json_array_foreach(value, index, item) { total += keys(item); }
  }
  return total;
}

static int depth(json_t *value) {
  int deepest = 0;
  if (json_is_object(value)) {
    const char *key;
    json_t *item;
    json_object_foreach(value, key, item) {
      int d = depth(item);
      if (d > deepest) deepest = d;
    }
    return deepest + 1;
  }
  if (json_is_array(value)) {
    size_t index;
    json_t *item;
    json_array_foreach(value, index, item) {
      int d = depth(item);
      if (d > deepest) deepest = d;
    }
    return deepest + 1;
  }
  return 0;
}

static int with_document(const char *text, int (*fn)(json_t *)) {
  json_error_t error;
  json_t *root = json_loads(text, JSON_DECODE_ANY, &error);
  if (!root) return -1;
  int result = fn(root);
  json_decref(root);
  return result;
}

int jsoncount_keys(const char *text) { return with_document(text, keys); }
int jsoncount_depth(const char *text) { return with_document(text, depth); }
