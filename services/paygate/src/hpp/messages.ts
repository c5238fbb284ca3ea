import type { CardFormProblem } from '../domain/card-form.js';
import type { Locale } from './locale.js';

/**
 * Every text of the hosted page in the payer's language. The labels and hints of the page's inputs
 * come from the gateway file's `page_fields` (per language, like a service's fields); the rest is here.
 */
export interface Messages {
  readonly payTo: (merchant: string) => string;
  readonly merchant: string;
  readonly description: string;
  readonly amount: string;
  readonly fee: string;
  readonly totalToPay: string;
  readonly totalPaid: string;
  readonly total: string;
  readonly testMode: string;
  readonly payBy: (method: string) => string;
  readonly payButton: (amount: string) => string;
  readonly cancelAndReturn: (merchant: string) => string;
  readonly fixErrors: string;
  readonly cardProblems: Readonly<Record<CardFormProblem, string>>;
  readonly cardBrand: string;
  readonly testCardsIntro: string;
  readonly testCards: {
    readonly success: string;
    readonly challenge: string;
    readonly declined: string;
    readonly funds: string;
  };
  readonly attemptFailed: string;
  readonly tryAnotherCard: (left: number) => string;
  readonly attemptFailures: Readonly<Record<string, string>>;
  readonly confirmTitle: string;
  readonly confirmText: (amount: string, merchant: string, card: string) => string;
  readonly testCodeHint: (code: string) => string;
  readonly confirmButton: string;
  readonly cancelConfirmation: string;
  readonly successTitle: string;
  readonly expiredTitle: string;
  readonly failedTitle: string;
  readonly paid: (amount: string, merchant: string) => string;
  readonly expiredText: string;
  readonly failures: Readonly<Record<string, string>>;
  readonly genericFailure: string;
  readonly card: string;
  readonly invoiceLine: (invoice: string, reference: string) => string;
  readonly returnTo: (merchant: string) => string;
  readonly walletSandbox: (method: string) => string;
  readonly payWith: (method: string) => string;
  readonly approve: (amount: string) => string;
  readonly decline: string;
  readonly linkInvalidTitle: string;
  readonly linkInvalidText: string;
  readonly cannotStartTitle: string;
}

const en: Messages = {
  payTo: (m) => `Pay ${m}`,
  merchant: 'Merchant',
  description: 'Description',
  amount: 'Amount',
  fee: 'Fee',
  totalToPay: 'Total to pay',
  totalPaid: 'Total paid',
  total: 'Total',
  testMode: 'Test mode',
  payBy: (m) => `Pay by ${m}`,
  payButton: (a) => `Pay ${a}`,
  cancelAndReturn: (m) => `Cancel and return to ${m}`,
  fixErrors: 'Please correct the following',
  cardProblems: {
    card_number_missing: 'Enter the card number.',
    card_number_not_digits: 'The card number may contain digits only.',
    card_number_length: 'The card number must have 12 to 19 digits.',
    card_number_luhn: 'This card number is not valid. Check it for typos.',
    expiry_missing: 'Enter the expiry date as MM/YY.',
    expiry_malformed: 'Enter the expiry date as MM/YY, e.g. 12/30.',
    expiry_past: 'This card has expired.',
    cvc_missing: 'Enter the security code (CVC).',
    cvc_malformed: 'The security code is the 3 digits on the back of the card.',
  },
  cardBrand: 'Card brand',
  testCardsIntro: 'No real money moves. Test cards (any future expiry, any 3-digit code):',
  testCards: {
    success: 'succeeds',
    challenge: 'asks for a confirmation code',
    declined: 'is declined',
    funds: 'has insufficient funds',
  },
  attemptFailed: 'The payment did not go through',
  tryAnotherCard: (n) =>
    `No money was taken. Try another card: ${n} ${n === 1 ? 'attempt' : 'attempts'} left.`,
  attemptFailures: {
    declined: 'Your card was declined.',
    insufficient_funds: 'The card has insufficient funds.',
    authentication_failed: 'The confirmation code was wrong.',
    authentication_canceled: 'You cancelled the confirmation with your bank.',
  },
  confirmTitle: 'Confirm your payment',
  confirmText: (a, m, c) =>
    `Your card issuer asks you to confirm this payment of ${a} to ${m} with card ${c}.`,
  testCodeHint: (c) => `Test mode: the code is ${c}; any other code fails.`,
  confirmButton: 'Confirm payment',
  cancelConfirmation: 'Cancel and use another card',
  successTitle: 'Payment successful',
  expiredTitle: 'Payment expired',
  failedTitle: 'Payment failed',
  paid: (a, m) => `You paid ${a} to ${m}.`,
  expiredText: 'The time to pay this invoice has run out. No money was taken.',
  failures: {
    declined: 'Your card was declined. No money was taken.',
    insufficient_funds: 'The card has insufficient funds. No money was taken.',
    authentication_failed: 'The confirmation code was wrong, so the payment was not made.',
    authentication_canceled: 'You cancelled the confirmation with your bank, so the payment was not made.',
    canceled_by_payer: 'You cancelled the payment. No money was taken.',
  },
  genericFailure: 'The payment did not go through. No money was taken.',
  card: 'Card',
  invoiceLine: (i, r) => `Invoice ${i}, reference ${r}.`,
  returnTo: (m) => `Return to ${m}`,
  walletSandbox: (m) => `This sandbox stands in for the ${m} site: approve or decline the payment.`,
  payWith: (m) => `Pay with ${m}`,
  approve: (a) => `Approve ${a}`,
  decline: 'Decline',
  linkInvalidTitle: 'This payment link is not valid',
  linkInvalidText: 'Go back to the merchant and start the payment again.',
  cannotStartTitle: 'This payment cannot be started',
};

const uk: Messages = {
  payTo: (m) => `Оплата для ${m}`,
  merchant: 'Продавець',
  description: 'Опис',
  amount: 'Сума',
  fee: 'Комісія',
  totalToPay: 'Усього до сплати',
  totalPaid: 'Усього сплачено',
  total: 'Усього',
  testMode: 'Тестовий режим',
  payBy: (m) => `Оплата: ${m}`,
  payButton: (a) => `Сплатити ${a}`,
  cancelAndReturn: (m) => `Скасувати й повернутися до ${m}`,
  fixErrors: 'Виправте, будь ласка, таке',
  cardProblems: {
    card_number_missing: 'Введіть номер картки.',
    card_number_not_digits: 'Номер картки може містити лише цифри.',
    card_number_length: 'Номер картки має містити від 12 до 19 цифр.',
    card_number_luhn: 'Цей номер картки недійсний. Перевірте, чи немає помилок.',
    expiry_missing: 'Введіть термін дії у форматі ММ/РР.',
    expiry_malformed: 'Введіть термін дії у форматі ММ/РР, наприклад 12/30.',
    expiry_past: 'Термін дії цієї картки минув.',
    cvc_missing: 'Введіть код безпеки (CVC).',
    cvc_malformed: 'Код безпеки: 3 цифри на звороті картки.',
  },
  cardBrand: 'Платіжна система',
  testCardsIntro:
    'Справжні гроші не списуються. Тестові картки (будь-який майбутній термін, будь-який тризначний код):',
  testCards: {
    success: 'оплата успішна',
    challenge: 'запитує код підтвердження',
    declined: 'відхилена',
    funds: 'недостатньо коштів',
  },
  attemptFailed: 'Оплата не відбулася',
  tryAnotherCard: (n) => `Гроші не списано. Спробуйте іншу картку: залишилось спроб: ${n}.`,
  attemptFailures: {
    declined: 'Вашу картку відхилено.',
    insufficient_funds: 'На картці недостатньо коштів.',
    authentication_failed: 'Код підтвердження неправильний.',
    authentication_canceled: 'Ви скасували підтвердження в банку.',
  },
  confirmTitle: 'Підтвердьте оплату',
  confirmText: (a, m, c) =>
    `Банк, що випустив картку, просить підтвердити оплату ${a} для ${m} карткою ${c}.`,
  testCodeHint: (c) => `Тестовий режим: код ${c}; будь-який інший код не пройде.`,
  confirmButton: 'Підтвердити оплату',
  cancelConfirmation: 'Скасувати й вибрати іншу картку',
  successTitle: 'Оплата успішна',
  expiredTitle: 'Час оплати минув',
  failedTitle: 'Оплата не вдалася',
  paid: (a, m) => `Ви сплатили ${a} для ${m}.`,
  expiredText: 'Час на оплату цього рахунку минув. Гроші не списано.',
  failures: {
    declined: 'Вашу картку відхилено. Гроші не списано.',
    insufficient_funds: 'На картці недостатньо коштів. Гроші не списано.',
    authentication_failed: 'Код підтвердження неправильний, тому оплату не здійснено.',
    authentication_canceled: 'Ви скасували підтвердження в банку, тому оплату не здійснено.',
    canceled_by_payer: 'Ви скасували оплату. Гроші не списано.',
  },
  genericFailure: 'Оплата не відбулася. Гроші не списано.',
  card: 'Картка',
  invoiceLine: (i, r) => `Рахунок ${i}, номер замовлення ${r}.`,
  returnTo: (m) => `Повернутися до ${m}`,
  walletSandbox: (m) => `Ця пісочниця замінює сайт ${m}: підтвердьте або відхиліть оплату.`,
  payWith: (m) => `Оплата через ${m}`,
  approve: (a) => `Підтвердити ${a}`,
  decline: 'Відхилити',
  linkInvalidTitle: 'Це посилання на оплату недійсне',
  linkInvalidText: 'Поверніться до продавця й почніть оплату знову.',
  cannotStartTitle: 'Цю оплату не можна почати',
};

const ru: Messages = {
  payTo: (m) => `Оплата для ${m}`,
  merchant: 'Продавец',
  description: 'Описание',
  amount: 'Сумма',
  fee: 'Комиссия',
  totalToPay: 'Итого к оплате',
  totalPaid: 'Итого оплачено',
  total: 'Итого',
  testMode: 'Тестовый режим',
  payBy: (m) => `Оплата: ${m}`,
  payButton: (a) => `Оплатить ${a}`,
  cancelAndReturn: (m) => `Отменить и вернуться в ${m}`,
  fixErrors: 'Пожалуйста, исправьте следующее',
  cardProblems: {
    card_number_missing: 'Введите номер карты.',
    card_number_not_digits: 'Номер карты может содержать только цифры.',
    card_number_length: 'Номер карты должен содержать от 12 до 19 цифр.',
    card_number_luhn: 'Этот номер карты недействителен. Проверьте, нет ли опечаток.',
    expiry_missing: 'Введите срок действия в формате ММ/ГГ.',
    expiry_malformed: 'Введите срок действия в формате ММ/ГГ, например 12/30.',
    expiry_past: 'Срок действия этой карты истёк.',
    cvc_missing: 'Введите код безопасности (CVC).',
    cvc_malformed: 'Код безопасности: 3 цифры на обороте карты.',
  },
  cardBrand: 'Платёжная система',
  testCardsIntro:
    'Настоящие деньги не списываются. Тестовые карты (любой будущий срок, любой трёхзначный код):',
  testCards: {
    success: 'оплата успешна',
    challenge: 'запрашивает код подтверждения',
    declined: 'отклонена',
    funds: 'недостаточно средств',
  },
  attemptFailed: 'Оплата не прошла',
  tryAnotherCard: (n) => `Деньги не списаны. Попробуйте другую карту: осталось попыток: ${n}.`,
  attemptFailures: {
    declined: 'Ваша карта отклонена.',
    insufficient_funds: 'На карте недостаточно средств.',
    authentication_failed: 'Код подтверждения неверный.',
    authentication_canceled: 'Вы отменили подтверждение в банке.',
  },
  confirmTitle: 'Подтвердите оплату',
  confirmText: (a, m, c) => `Банк, выпустивший карту, просит подтвердить оплату ${a} для ${m} картой ${c}.`,
  testCodeHint: (c) => `Тестовый режим: код ${c}; любой другой код не пройдёт.`,
  confirmButton: 'Подтвердить оплату',
  cancelConfirmation: 'Отменить и выбрать другую карту',
  successTitle: 'Оплата прошла успешно',
  expiredTitle: 'Время оплаты истекло',
  failedTitle: 'Оплата не удалась',
  paid: (a, m) => `Вы оплатили ${a} для ${m}.`,
  expiredText: 'Время на оплату этого счёта истекло. Деньги не списаны.',
  failures: {
    declined: 'Ваша карта отклонена. Деньги не списаны.',
    insufficient_funds: 'На карте недостаточно средств. Деньги не списаны.',
    authentication_failed: 'Код подтверждения неверный, поэтому оплата не проведена.',
    authentication_canceled: 'Вы отменили подтверждение в банке, поэтому оплата не проведена.',
    canceled_by_payer: 'Вы отменили оплату. Деньги не списаны.',
  },
  genericFailure: 'Оплата не прошла. Деньги не списаны.',
  card: 'Карта',
  invoiceLine: (i, r) => `Счёт ${i}, номер заказа ${r}.`,
  returnTo: (m) => `Вернуться в ${m}`,
  walletSandbox: (m) => `Эта песочница заменяет сайт ${m}: подтвердите или отклоните оплату.`,
  payWith: (m) => `Оплата через ${m}`,
  approve: (a) => `Подтвердить ${a}`,
  decline: 'Отклонить',
  linkInvalidTitle: 'Эта ссылка на оплату недействительна',
  linkInvalidText: 'Вернитесь к продавцу и начните оплату заново.',
  cannotStartTitle: 'Эту оплату нельзя начать',
};

export const MESSAGES: Readonly<Record<Locale, Messages>> = { en, uk, ru };
