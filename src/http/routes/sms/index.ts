import { smsIndex } from './list.ts';
import { smsSend } from './send.ts';
import { smsSendGroup } from './send-group.ts';
import { singleScheduleMessages } from './single-schedule-messages.ts';
import { smsView } from './view.ts';

/** `/v1/sms/…`: sending, the message log and scheduled messages (spec; API-EXTENSIONS §6). */
export const sms = [
  singleScheduleMessages,
  smsSend,
  smsSendGroup,
  smsIndex,
  smsView,
];
