#include "config.h"

#include "core/flamesvg.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define SVG_WIDTH	1200
#define SVG_PAD		10
#define FRAME_H		16
#define HEAD_H		60	/* title, subtitle, controls */
#define FOOT_H		24	/* the details line */
#define MIN_PX		0.1	/* narrower frames are left out, as flamegraph.pl does */
#define CHAR_PX		7

/*
 * The script: frames carry their place in samples (fx, fw) and full name
 * (n); draw() lays them out for the zoomed range.  Written for old
 * browsers too: no modules, no arrow functions.
 */
static const char svg_script[] =
"var W=" "1200" ",P=10,frames,det,mt,zx=0,zw,zd=0,total,re=null;\n"
"function init(){total=+document.documentElement.getAttribute('data-total');zw=total;\n"
" det=document.getElementById('details');mt=document.getElementById('matched');\n"
" frames=[].slice.call(document.getElementsByClassName('f'));\n"
" frames.forEach(function(g){g.onclick=function(){zoom(g)};\n"
"  g.onmouseover=function(){det.textContent=g.getElementsByTagName('title')[0].textContent};\n"
"  g.onmouseout=function(){det.textContent=' '}});\n"
" document.getElementById('unzoom').onclick=function(){zoom(null)};\n"
" document.getElementById('search').onclick=function(){if(re){reset()}else{ask()}};\n"
" window.addEventListener('keydown',function(e){if((e.ctrlKey&&e.keyCode==70)){e.preventDefault();ask()}\n"
"  else if(e.keyCode==27){zoom(null)}});draw()}\n"
"function zoom(g){if(g){zx=+g.getAttribute('fx');zw=+g.getAttribute('fw');zd=+g.getAttribute('d')}\n"
" else{zx=0;zw=total;zd=0}document.getElementById('unzoom').style.opacity=g?1:0.3;draw();if(re)mark()}\n"
"function draw(){var s=(W-2*P)/zw;frames.forEach(function(g){var x=+g.getAttribute('fx'),w=+g.getAttribute('fw'),\n"
"  r=g.getElementsByTagName('rect')[0],t=g.getElementsByTagName('text')[0];\n"
"  if(x+w<=zx||x>=zx+zw||(w*s)<0.1){g.style.display='none';return}\n"
"  var a=Math.max(x,zx),b=Math.min(x+w,zx+zw),px=P+(a-zx)*s,pw=(b-a)*s;g.style.display='';\n"
"  g.style.opacity=(+g.getAttribute('d')<zd)?0.5:1;\n"
"  r.setAttribute('x',px);r.setAttribute('width',pw);t.setAttribute('x',px+3);\n"
"  var n=g.getAttribute('n'),c=Math.floor((pw-6)/7);\n"
"  t.textContent=c<3?'':(n.length<=c?n:n.substring(0,c-2)+'..')})}\n"
"function ask(){var q=prompt('Search (regular expression)','');if(q==null||q=='')return;\n"
" try{re=new RegExp(q)}catch(e){alert('bad expression: '+e.message);return}\n"
" document.getElementById('search').textContent='Reset search';mark()}\n"
"function reset(){re=null;frames.forEach(function(g){var r=g.getElementsByTagName('rect')[0];\n"
" r.setAttribute('fill',r.getAttribute('data-fill'))});mt.textContent=' ';\n"
" document.getElementById('search').textContent='Search'}\n"
"function mark(){var iv=[];frames.forEach(function(g){var r=g.getElementsByTagName('rect')[0];\n"
"  if(re.test(g.getAttribute('n'))){r.setAttribute('fill','rgb(230,0,230)');\n"
"   var x=+g.getAttribute('fx'),w=+g.getAttribute('fw'),a=Math.max(x,zx),b=Math.min(x+w,zx+zw);\n"
"   if(b>a)iv.push([a,b])}else r.setAttribute('fill',r.getAttribute('data-fill'))});\n"
" iv.sort(function(p,q){return p[0]-q[0]});var m=0,e=-1;\n"
" iv.forEach(function(v){if(v[0]>=e){m+=v[1]-v[0];e=v[1]}else if(v[1]>e){m+=v[1]-e;e=v[1]}});\n"
" mt.textContent='Matched: '+(100*m/zw).toFixed(1)+'% of '+(zw==total?'all':'zoom')}\n";

/* XML text or attribute value: the five specials; names are printable already. */
static void
xml_str(FILE *f, const char *s, size_t max)
{
	size_t n = 0;

	for (; s != NULL && *s != '\0' && n < max; s++, n++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* XML 1.0 forbids most control characters, even escaped. */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
		}
	}
}

/* Warm colours from the name, as flamegraph.pl's "hot" palette; native bluish. */
static void
colour(const struct profile_frame *fr, char *buf, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *s;

	for (s = fr->name; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	if (fr->thread)
		snprintf(buf, len, "rgb(200,200,200)");
	else if (fr->process)
		snprintf(buf, len, "rgb(170,200,170)");
	else if (fr->native)
		snprintf(buf, len, "rgb(%u,%u,230)", 80 + (unsigned)(h % 60), 140 + (unsigned)(h >> 8) % 80);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + (unsigned)(h % 50),
		    (unsigned)(h >> 8) % 230, (unsigned)(h >> 16) % 55);
}

static size_t
max_depth(const struct profile *p, uint32_t **depthp)
{
	uint32_t *d = xcalloc(p->nnodes, sizeof *d);
	size_t i, m = 0;

	/* Children are always created after their parent: one pass in order. */
	for (i = 1; i < p->nnodes; i++) {
		d[i] = p->nodes[i].parent == 0 ? 0 : d[p->nodes[i].parent] + 1;
		if (d[i] + 1 > m)
			m = d[i] + 1;
	}
	*depthp = d;
	return m;
}

static void
frame_g(const struct profile *p, FILE *f, uint32_t node, uint64_t x, uint32_t depth,
    size_t height)
{
	const struct profile_node *nd = &p->nodes[node];
	const struct profile_frame *fr = &p->frames[nd->frame];
	double total = (double)p->nodes[0].total, scale = (SVG_WIDTH - 2 * SVG_PAD) / total;
	double px = SVG_PAD + (double)x * scale, pw = (double)nd->total * scale;
	double y = (double)(HEAD_H + (height - 1 - depth) * FRAME_H);
	char *label = profile_frame_label(fr), fill[40];
	size_t chars = pw > 6 ? (size_t)((pw - 6) / CHAR_PX) : 0;

	colour(fr, fill, sizeof fill);
	fprintf(f, "<g class=\"f\" fx=\"%llu\" fw=\"%llu\" d=\"%u\" n=\"",
	    (unsigned long long)x, (unsigned long long)nd->total, depth);
	xml_str(f, label, SIZE_MAX);
	fputs("\"><title>", f);
	xml_str(f, label, SIZE_MAX);
	fprintf(f, " (%llu samples, %.2f%%, own %llu)</title>", (unsigned long long)nd->total,
	    100.0 * (double)nd->total / total, (unsigned long long)nd->self);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
	    "data-fill=\"%s\" rx=\"2\"/><text x=\"%.1f\" y=\"%.0f\">", px, y, pw, FRAME_H - 1,
	    fill, fill, px + 3, y + FRAME_H - 4);
	if (chars >= 3)
		xml_str(f, label, strlen(label) <= chars ? chars : chars - 2);
	if (chars >= 3 && strlen(label) > chars)
		fputs("..", f);
	fputs("</text></g>\n", f);
	free(label);
}

/* Every node, children laid out left to right under their parent. */
static void
frames_all(const struct profile *p, FILE *f, const uint32_t *depth, size_t height)
{
	uint64_t *x = xcalloc(p->nnodes, sizeof *x);
	double scale = (SVG_WIDTH - 2 * SVG_PAD) / (double)p->nodes[0].total;
	size_t i;

	for (i = 0; i < p->nnodes; i++) {
		uint64_t cx = x[i];
		uint32_t c;

		for (c = p->nodes[i].child; c != PROFILE_NONE; c = p->nodes[c].sibling) {
			x[c] = cx;
			cx += p->nodes[c].total;
		}
		if (i > 0 && (double)p->nodes[i].total * scale >= MIN_PX)
			frame_g(p, f, (uint32_t)i, x[i], depth[i], height);
	}
	free(x);
}

int
flamesvg_write(const struct profile *p, FILE *f, const char *title, const char *subtitle)
{
	uint32_t *depth = NULL;
	size_t height = max_depth(p, &depth);
	size_t h = HEAD_H + (height > 0 ? height : 1) * FRAME_H + FOOT_H;

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	    "<svg version=\"1.1\" width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\" "
	    "xmlns=\"http://www.w3.org/2000/svg\" data-total=\"%llu\" onload=\"init()\">\n"
	    "<style>text{font-family:monospace;font-size:12px;fill:#000}"
	    "g.f:hover rect{stroke:#000;stroke-width:0.5}g.f{cursor:pointer}"
	    "#unzoom,#search{cursor:pointer}</style>\n<script><![CDATA[\n%s]]></script>\n",
	    SVG_WIDTH, h, SVG_WIDTH, h, (unsigned long long)p->nodes[0].total, svg_script);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%zu\" fill=\"#f8f8f0\"/>\n"
	    "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" style=\"font-size:16px\">",
	    SVG_WIDTH, h, SVG_WIDTH / 2);
	xml_str(f, title, SIZE_MAX);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"38\" text-anchor=\"middle\">", SVG_WIDTH / 2);
	xml_str(f, subtitle, SIZE_MAX);
	fprintf(f, "</text>\n<text id=\"unzoom\" x=\"%d\" y=\"20\" style=\"opacity:0.3\">Reset zoom</text>\n"
	    "<text id=\"search\" x=\"%d\" y=\"20\" text-anchor=\"end\">Search</text>\n"
	    "<text id=\"matched\" x=\"%d\" y=\"%zu\" text-anchor=\"end\"> </text>\n"
	    "<text id=\"details\" x=\"%d\" y=\"%zu\"> </text>\n",
	    SVG_PAD, SVG_WIDTH - SVG_PAD, SVG_WIDTH - SVG_PAD, h - 8, SVG_PAD, h - 8);
	if (p->nodes[0].total > 0)
		frames_all(p, f, depth, height);
	fputs("</svg>\n", f);
	free(depth);
	if (ferror(f)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}
