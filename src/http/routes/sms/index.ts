import { smsCancelScheduled } from './cancel-scheduled.ts';
import { smsConversations } from './conversations.ts';
import { smsExport } from './export.ts';
import { smsIndex } from './list.ts';
import { smsLinks } from './links.ts';
import { smsMarkRead } from './mark-read.ts';
import { smsPreview } from './preview.ts';
import { smsSchedule } from './schedule.ts';
import { smsSend } from './send.ts';
import { smsSendGroup } from './send-group.ts';
import { singleScheduleMessages } from './single-schedule-messages.ts';
import { smsStats } from './stats.ts';
import { smsUpdateScheduled } from './update-scheduled.ts';
import { smsView } from './view.ts';
import { smsViewScheduled } from './view-scheduled.ts';

/** `/v1/sms/…`: sending, the message log and scheduled messages (API.md §10.6). */
export const sms = [
  singleScheduleMessages,
  smsSend,
  smsSendGroup,
  smsPreview,
  smsIndex,
  smsView,
  smsLinks,
  smsStats,
  smsExport,
  smsConversations,
  smsMarkRead,
  smsSchedule,
  smsViewScheduled,
  smsUpdateScheduled,
  smsCancelScheduled,
];
