/**
 * Progressive enhancement of the card form: the same checks as the server (Luhn, MM/YY not in the
 * past, 3-4 digit code) with the same messages in the payer's language (read from the page's JSON
 * block), shown next to the fields before the form is sent; the card number grouped as the payer
 * types (American Express 4-6-5, others in fours, the caret kept after the same digit) and its brand
 * shown in the field (domain/card-brand.ts, mirrored here). Without JavaScript the server does all of it.
 */
export const CARD_FORM_SCRIPT = `
(function(){
var form=document.getElementById('card-form');if(!form)return;
var data=JSON.parse(document.getElementById('page-data').textContent);var P=data.problems;
function luhn(d){var s=0,dbl=false;for(var i=d.length-1;i>=0;i--){var n=d.charCodeAt(i)-48;if(dbl){n*=2;if(n>9)n-=9;}s+=n;dbl=!dbl;}return s%10===0;}
function inRange(d,len,a,b){if(d.length<len)return false;var p=+d.slice(0,len);return p>=a&&p<=b;}
function brand(d){if(!d)return '';if(d[0]==='4')return 'visa';if(inRange(d,2,34,34)||inRange(d,2,37,37))return 'amex';
if(inRange(d,4,2200,2204))return 'mir';if(inRange(d,2,51,55)||inRange(d,4,2221,2720))return 'mastercard';
if(d.slice(0,4)==='6011'||d.slice(0,2)==='65'||inRange(d,3,644,649))return 'discover';if(inRange(d,4,3528,3589))return 'jcb';
if(d.slice(0,2)==='62')return 'unionpay';if(/^(50|5[6-9]|6[0-9])/.test(d))return 'maestro';return '';}
function group(d){if(brand(d)==='amex')return [d.slice(0,4),d.slice(4,10),d.slice(10,15)].filter(Boolean).join(' ');return d.replace(/(\\d{4})(?=\\d)/g,'$1 ');}
function check(){var e={};var num=form.card_number.value.replace(/[\\s-]/g,'');
if(!num)e.card_number='card_number_missing';else if(!/^\\d+$/.test(num))e.card_number='card_number_not_digits';
else if(num.length<12||num.length>19)e.card_number='card_number_length';else if(!luhn(num))e.card_number='card_number_luhn';
var ex=form.expiry.value.trim();var m=/^(\\d{1,2})\\s*\\/?\\s*(\\d{2}|\\d{4})$/.exec(ex);
if(!ex)e.expiry='expiry_missing';else if(!m||+m[1]<1||+m[1]>12)e.expiry='expiry_malformed';
else{var y=m[2].length===2?2000+ +m[2]:+m[2];var now=new Date();if(y*12+(+m[1]-1)<now.getUTCFullYear()*12+now.getUTCMonth())e.expiry='expiry_past';}
var c=form.cvc.value.trim();if(!c)e.cvc='cvc_missing';else if(!/^\\d{3,4}$/.test(c))e.cvc='cvc_malformed';
return e;}
function show(e){var first=null;['card_number','expiry','cvc'].forEach(function(k){var input=form[k];var out=document.getElementById(k+'-error');
var base=k+'-hint'+(k==='card_number'?' card_number-brand':'');
if(e[k]){out.textContent=P[e[k]];out.hidden=false;input.setAttribute('aria-invalid','true');input.setAttribute('aria-describedby',base+' '+k+'-error');if(!first)first=input;}
else{out.textContent='';out.hidden=true;input.removeAttribute('aria-invalid');input.setAttribute('aria-describedby',base);}});return first;}
form.addEventListener('submit',function(ev){var first=show(check());if(first){ev.preventDefault();first.focus();}});
var badge=document.getElementById('card_number-brand');
form.card_number.addEventListener('input',function(){var caret=this.selectionStart===null?this.value.length:this.selectionStart;
var before=this.value.slice(0,caret).replace(/\\D/g,'').length;var d=this.value.replace(/\\D/g,'').slice(0,19);var f=group(d);
if(f!==this.value){this.value=f;var pos=0,seen=0;while(pos<f.length&&seen<before){if(/\\d/.test(f[pos]))seen++;pos++;}this.setSelectionRange(pos,pos);}
var b=brand(d);var name=b?data.brands[b]:'';if(badge&&badge.textContent!==name)badge.textContent=name;});
var summary=document.getElementById('error-summary')||document.getElementById('attempt-summary');if(summary)summary.focus();
})();
`;
