#ifndef JSONCOUNT_H
#define JSONCOUNT_H
/* Count the keys of every object in a JSON document, and its nesting depth.
   Both return -1 when the text is not JSON. */
int jsoncount_keys(const char *text);
int jsoncount_depth(const char *text);
#endif
