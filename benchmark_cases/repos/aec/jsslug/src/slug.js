'use strict';

const ACCENTS = /[\u0300-\u036f]/g;

function slugify(text, { separator = '-', maxLength = 80 } = {}) {
  const slug = String(text)
    .normalize('NFKD')
    .replace(ACCENTS, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, separator)
    .replace(new RegExp(`^\\${separator}+|\\${separator}+$`, 'g'), '');
  return slug.slice(0, maxLength).replace(new RegExp(`\\${separator}+$`), '');
}

function unique(slug, taken) {
  if (!taken.has(slug)) return slug;
  let n = 2;
  while (taken.has(`${slug}-${n}`)) n += 1;
  return `${slug}-${n}`;
}

module.exports = { slugify, unique };
