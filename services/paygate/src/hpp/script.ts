/**
 * Progressive enhancement of the card form: the same checks as the server (Luhn, MM/YY not in the
 * past, 3-4 digit code) with the same messages, shown next to the fields before the form is sent.
 * Without JavaScript the server does all of it.
 */
export const CARD_FORM_SCRIPT = `
(function(){
var form=document.getElementById('card-form');if(!form)return;
function luhn(d){var s=0,dbl=false;for(var i=d.length-1;i>=0;i--){var n=d.charCodeAt(i)-48;if(dbl){n*=2;if(n>9)n-=9;}s+=n;dbl=!dbl;}return s%10===0;}
function check(){var e={};var num=form.card_number.value.replace(/[\\s-]/g,'');
if(!num)e.card_number='Enter the card number.';else if(!/^\\d+$/.test(num))e.card_number='The card number may contain digits only.';
else if(num.length<12||num.length>19)e.card_number='The card number must have 12 to 19 digits.';else if(!luhn(num))e.card_number='This card number is not valid. Check it for typos.';
var ex=form.expiry.value.trim();var m=/^(\\d{1,2})\\s*\\/?\\s*(\\d{2}|\\d{4})$/.exec(ex);
if(!ex)e.expiry='Enter the expiry date as MM/YY.';else if(!m||+m[1]<1||+m[1]>12)e.expiry='Enter the expiry date as MM/YY, e.g. 12/30.';
else{var y=m[2].length===2?2000+ +m[2]:+m[2];var now=new Date();if(y*12+(+m[1]-1)<now.getUTCFullYear()*12+now.getUTCMonth())e.expiry='This card has expired.';}
var c=form.cvc.value.trim();if(!c)e.cvc='Enter the security code (CVC).';else if(!/^\\d{3,4}$/.test(c))e.cvc='The security code is the 3 digits on the back of the card.';
return e;}
function show(e){var first=null;['card_number','expiry','cvc'].forEach(function(k){var input=form[k];var out=document.getElementById(k+'-error');
if(e[k]){out.textContent=e[k];out.hidden=false;input.setAttribute('aria-invalid','true');input.setAttribute('aria-describedby',k+'-hint '+k+'-error');if(!first)first=input;}
else{out.textContent='';out.hidden=true;input.removeAttribute('aria-invalid');input.setAttribute('aria-describedby',k+'-hint');}});return first;}
form.addEventListener('submit',function(ev){var first=show(check());if(first){ev.preventDefault();first.focus();}});
form.card_number.addEventListener('input',function(){var d=this.value.replace(/\\D/g,'').slice(0,19);var f=d.replace(/(\\d{4})(?=\\d)/g,'$1 ');if(f!==this.value)this.value=f;});
var summary=document.getElementById('error-summary');if(summary)summary.focus();
})();
`;
