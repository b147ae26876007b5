#!/usr/bin/perl
# A small SMSC for msgsvc's SMPP tests and bench, on Debian's libnet-smpp-perl (Perl Net::SMPP:
# an SMPP codec independent of ours). One process, one loop over IO::Select: it accepts ESMEs on a
# loopback port, answers bind_transceiver, enquire_link, unbind and submit_sm, and sends delivery
# receipts and inbound texts (deliver_sm) when they are due.
#
# Usage: perl test/smsc/fake-smsc.pl [options]
#   --host H              listen address (default 127.0.0.1)
#   --port N              listen port (default 0: any free port)
#   --system-id ID        accept only this system_id (default: any)
#   --password PW         and this password (default: any)
#   --receipt-delay-ms N  send a receipt N ms after each accepted submit_sm that asks for one
#                         (registered_delivery bit 0); -1: never (default 50)
#   --receipt-mode M      how receipts name the message: both (TLV receipted_message_id and the
#                         `id:` text), tlv (TLV only, text id blanked), text (text only) (default both)
#   --resp-delay-ms N     answer each submit_sm N ms late (to hold a window open; default 0)
#   --undeliver DEST      receipts for DEST say stat:UNDELIV err:001 (repeatable)
#   --fail DEST=STATUS    answer submit_sm to DEST with STATUS (e.g. 0x0b) (repeatable)
#   --throttle N          answer the next N submit_sm with ESME_RTHROTTLED (0x58)
#   --state FILE          remember accepted messages whose receipt is not yet acknowledged in
#                         FILE, and send their receipts after a restart (as a real SMSC does)
#   --quiet               do not print submit_sm / deliver_sm_resp lines (bench)
#
# Commands, one per line on standard input:
#   throttle N [STATUS]           the next N submit_sm get STATUS (default 0x58 ESME_RTHROTTLED)
#   fail DEST STATUS              submit_sm to DEST get STATUS from now on
#   undeliver DEST                receipts for DEST say UNDELIV
#   mode both|tlv|text            how receipts name the message from now on (see --receipt-mode)
#   drop                          close every ESME connection at once
#   inbound FROM TO TEXT          a deliver_sm, data_coding 0 (TEXT's ASCII bytes as GSM septets)
#   inbound-ucs2 FROM TO TEXT     a deliver_sm, data_coding 8 (TEXT, UTF-8 on stdin, as UTF-16BE)
#   inbound-concat FROM TO REF TEXT1|TEXT2|…   one deliver_sm per part, UDH 05 00 03 REF N i
#   stats                         prints a stats line
#
# Output: one JSON object per line on standard output, `ev` first:
#   listening {port}; bind {system_id, status}; submit_sm {seq, src, dst, esm_class, data_coding,
#   registered_delivery, udh_hex, sm_hex, status, message_id}; receipt {id, dst, stat};
#   deliver_sm_resp {seq, status}; inbound {from, to, parts}; enquire_link; unbind; drop; stats {…}.
use strict;
use warnings;
use Net::SMPP;
use IO::Select;
use IO::Handle;
use Getopt::Long;
use Time::HiRes qw(time);
use POSIX qw(strftime);
use Encode qw(encode decode);

$| = 1;
$SIG{PIPE} = 'IGNORE';

my %opt = (host => '127.0.0.1', port => 0, 'receipt-delay-ms' => 50, 'receipt-mode' => 'both', 'resp-delay-ms' => 0, throttle => 0);
my (@undeliver, @fail);
GetOptions(\%opt, 'host=s', 'port=i', 'system-id=s', 'password=s', 'receipt-delay-ms=i', 'receipt-mode=s', 'resp-delay-ms=i',
  'undeliver=s' => \@undeliver, 'fail=s' => \@fail, 'throttle=i', 'state=s', 'quiet') or die "bad options\n";

my %undeliver = map { $_ => 1 } @undeliver;
my %fail = map { my ($d, $s) = split /=/, $_, 2; ($d => num($s)) } @fail;
my ($throttle_left, $throttle_status) = ($opt{throttle}, 0x58);

sub num { my $v = shift; return $v =~ /^0x/i ? hex($v) : $v + 0; }

my %STRING_KEYS = map { $_ => 1 } qw(src dst from to id message_id sm_hex udh_hex system_id stat cmd message);
# JSON for our own flat records: keys are words, values numbers or strings that need only \ and " escaped.
sub out {
  my ($ev, @kv) = @_;
  my @f = (qq{"ev":"$ev"});
  while (@kv) {
    my ($k, $v) = splice @kv, 0, 2;
    if (defined $v && !$STRING_KEYS{$k} && $v =~ /^-?\d{1,15}$/ && $v !~ /^-?0\d/) { push @f, qq{"$k":$v} }
    else { $v = '' unless defined $v; $v =~ s/(["\\])/\\$1/g; $v =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord $1)/ge; push @f, qq{"$k":"$v"} }
  }
  print '{', join(',', @f), "}\n";
}

my $listener = Net::SMPP->new_listen($opt{host}, port => $opt{port}, smpp_version => 0x34, listen => 16)
  or die "cannot listen on $opt{host}:$opt{port}: $!\n";
out('listening', port => $listener->sockport, pid => $$);

my $sel = IO::Select->new($listener, \*STDIN);
my %conns;        # fileno => { smpp => obj, bound => 0|1, receipts => { seq => id } }
my @timers;       # [when, code], kept sorted
my @waiting;      # receipts due while no ESME is bound
my $stdin_buf = '';
my $counter = 0;
my $id_prefix = sprintf('%x', $$);
my %stats = (submits => 0, accepted => 0, receipts => 0, inbound => 0);

# Pending receipts of a previous run (--state): accepted lines without their done line.
my %pending;
if ($opt{state} && -e $opt{state}) {
  open my $fh, '<', $opt{state} or die "state: $!\n";
  while (<$fh>) {
    chomp;
    my @f = split / /;
    if ($f[0] eq 'A') { $pending{$f[1]} = { id => $f[1], src => $f[2], dst => $f[3] } }
    elsif ($f[0] eq 'D') { delete $pending{$f[1]} }
  }
  close $fh;
}
my $state_fh;
if ($opt{state}) { open $state_fh, '>>', $opt{state} or die "state: $!\n"; $state_fh->autoflush(1); }
if ($opt{'receipt-delay-ms'} >= 0) { for my $m (values %pending) { at($opt{'receipt-delay-ms'}, sub { receipt($m, undef) }) } }

sub at {
  my ($ms, $code) = @_;
  my $when = time + $ms / 1000;
  my $i = @timers;
  $i-- while $i > 0 && $timers[$i - 1][0] > $when;
  splice @timers, $i, 0, [$when, $code];
}

sub bound_conn {
  my $prefer = shift;
  return $prefer if $prefer && $conns{fileno($prefer->{smpp}) // -1} && $prefer->{bound};
  for my $c (values %conns) { return $c if $c->{bound} }
  return undef;
}

sub close_conn {
  my $c = shift;
  my $fd = fileno($c->{smpp});
  $sel->remove($c->{smpp});
  delete $conns{$fd} if defined $fd;
  # Receipts sent on it but not acknowledged go out again on the next bind.
  for my $id (values %{ $c->{receipts} }) { push @waiting, $id }
  $c->{receipts} = {};
  close $c->{smpp};
}

sub ymdhm { strftime('%y%m%d%H%M', gmtime) }

sub receipt {
  my ($m, $prefer) = @_;
  my $c = bound_conn($prefer);
  if (!$c) { push @waiting, $m; return; }
  my $undeliv = $undeliver{ $m->{dst} };
  my ($stat, $err, $state) = $undeliv ? ('UNDELIV', '001', 5) : ('DELIVRD', '000', 2);
  my $text_id = $opt{'receipt-mode'} eq 'tlv' ? '' : $m->{id};
  my $d = ymdhm();
  my @tlv = $opt{'receipt-mode'} eq 'text' ? () : (receipted_message_id => "$m->{id}\0", message_state => chr($state));
  my $seq = $c->{smpp}->deliver_sm(
    async => 1, source_addr_ton => 1, source_addr_npi => 1, source_addr => $m->{dst}, dest_addr_ton => 1, dest_addr_npi => 1,
    destination_addr => $m->{src}, esm_class => 0x04, data_coding => 0,
    short_message => "id:$text_id sub:001 dlvrd:" . ($undeliv ? '000' : '001') . " submit date:$d done date:$d stat:$stat err:$err text:",
    @tlv);
  $c->{receipts}{$seq} = $m;
  $stats{receipts}++;
  out('receipt', id => $m->{id}, dst => $m->{dst}, stat => $stat, seq => $seq);
}

sub inbound {
  my ($from, $to, $dc, @parts) = @_;
  my $c = bound_conn(undef) or do { out('error', message => 'inbound: no bound ESME'); return; };
  for my $p (@parts) {
    my ($esm, $sm) = @$p;
    $c->{smpp}->deliver_sm(async => 1, source_addr_ton => 1, source_addr_npi => 1, source_addr => $from, dest_addr_ton => 0,
      dest_addr_npi => 1, destination_addr => $to, esm_class => $esm, data_coding => $dc, short_message => $sm);
  }
  $stats{inbound}++;
  out('inbound', from => $from, to => $to, parts => scalar @parts, data_coding => $dc);
}

sub command {
  my $line = shift;
  $line =~ s/\r?\n$//;
  my ($cmd, $rest) = split / /, $line, 2;
  return unless defined $cmd && length $cmd;
  $rest //= '';
  if ($cmd eq 'throttle') { my ($n, $s) = split / /, $rest; $throttle_left = $n; $throttle_status = defined $s ? num($s) : 0x58; }
  elsif ($cmd eq 'fail') { my ($d, $s) = split / /, $rest; $fail{$d} = num($s); }
  elsif ($cmd eq 'undeliver') { $undeliver{$rest} = 1; }
  elsif ($cmd eq 'mode') { $opt{'receipt-mode'} = $rest; }
  elsif ($cmd eq 'drop') { close_conn($_) for values %conns; out('drop'); }
  elsif ($cmd eq 'inbound') { my ($f, $t, $text) = split / /, $rest, 3; inbound($f, $t, 0, [0, $text]); }
  elsif ($cmd eq 'inbound-ucs2') {
    my ($f, $t, $text) = split / /, $rest, 3;
    inbound($f, $t, 8, [0, encode('UTF-16BE', decode('UTF-8', $text))]);
  }
  elsif ($cmd eq 'inbound-concat') {
    my ($f, $t, $ref, $text) = split / /, $rest, 4;
    my @texts = split /\|/, $text;
    my $n = @texts;
    inbound($f, $t, 0, map { [0x40, pack('C6', 5, 0, 3, $ref, $n, $_ + 1) . $texts[$_]] } 0 .. $#texts);
  }
  elsif ($cmd eq 'stats') { out('stats', %stats, connections => scalar(keys %conns), waiting => scalar @waiting); }
  else { out('error', message => "unknown command $cmd"); }
}

sub on_pdu {
  my ($c, $pdu) = @_;
  my $s = $c->{smpp};
  my $cmd = $pdu->{cmd};
  if ($cmd == 0x00000009) {    # bind_transceiver
    my $ok = (!defined $opt{'system-id'} || $pdu->{system_id} eq $opt{'system-id'})
      && (!defined $opt{password} || $pdu->{password} eq $opt{password});
    my $status = $ok ? 0 : ($pdu->{system_id} eq ($opt{'system-id'} // '') ? 0x0e : 0x0f);
    $s->bind_transceiver_resp(seq => $pdu->{seq}, status => $status, system_id => 'fakesmsc');
    out('bind', system_id => $pdu->{system_id}, status => $status, interface_version => $pdu->{interface_version});
    if ($ok) {
      $c->{bound} = 1;
      my @w = @waiting;
      @waiting = ();
      receipt($_, $c) for @w;
    }
  }
  elsif ($cmd == 0x00000015) { $s->enquire_link_resp(seq => $pdu->{seq}); out('enquire_link'); }
  elsif ($cmd == 0x00000006) { $s->unbind_resp(seq => $pdu->{seq}); out('unbind'); close_conn($c); }
  elsif ($cmd == 0x00000004) {    # submit_sm
    $stats{submits}++;
    my $dst = $pdu->{destination_addr};
    my $sm = $pdu->{short_message};
    my ($udh, $body) = ('', $sm);
    if ($pdu->{esm_class} & 0x40) { my $l = ord(substr($sm, 0, 1)); $udh = substr($sm, 0, $l + 1); $body = substr($sm, $l + 1); }
    my ($status, $id) = (0, '');
    if (!$c->{bound}) { $status = 0x04 }
    elsif ($throttle_left > 0) { $throttle_left--; $status = $throttle_status; }
    elsif (exists $fail{$dst}) { $status = $fail{$dst} }
    else { $id = sprintf('%s%07x', $id_prefix, ++$counter); }
    out('submit_sm', seq => $pdu->{seq}, src => $pdu->{source_addr}, dst => $dst, esm_class => $pdu->{esm_class},
      data_coding => $pdu->{data_coding}, registered_delivery => $pdu->{registered_delivery}, udh_hex => unpack('H*', $udh),
      sm_hex => unpack('H*', $body), status => $status, message_id => $id) unless $opt{quiet};
    my $m = { id => $id, src => $pdu->{source_addr}, dst => $dst };
    if ($status == 0) {
      $stats{accepted}++;
      print $state_fh "A $id $m->{src} $dst\n" if $state_fh && ($pdu->{registered_delivery} & 1);
    }
    my $seq = $pdu->{seq};
    my $answer = sub {
      return unless $conns{ fileno($s) // -1 };
      $s->submit_sm_resp(seq => $seq, status => $status, message_id => $id);
    };
    my $delay = $opt{'resp-delay-ms'};
    if ($delay > 0) { at($delay, $answer) } else { $answer->() }
    if ($status == 0 && ($pdu->{registered_delivery} & 1) && $opt{'receipt-delay-ms'} >= 0) {
      at(($delay > 0 ? $delay : 0) + $opt{'receipt-delay-ms'}, sub { receipt($m, $c) });
    }
  }
  elsif ($cmd == 0x80000005) {    # deliver_sm_resp
    my $m = delete $c->{receipts}{ $pdu->{seq} };
    out('deliver_sm_resp', seq => $pdu->{seq}, status => $pdu->{status}) unless $opt{quiet};
    if ($m) {
      if ($pdu->{status} == 0) { print $state_fh "D $m->{id}\n" if $state_fh; }
      else { my $mm = $m; at(200, sub { receipt($mm, undef) }); }    # asked to send it again later
    }
  }
  elsif ($cmd == 0x80000006 || $cmd == 0x80000015) { }    # unbind_resp, enquire_link_resp
  elsif ($cmd & 0x80000000) { out('response', cmd => sprintf('0x%08x', $cmd), status => $pdu->{status}); }
  else { $s->generic_nack(seq => $pdu->{seq}, status => 0x03); out('nack', cmd => sprintf('0x%08x', $cmd)); }
}

while (1) {
  my $timeout = @timers ? $timers[0][0] - time : 1;
  $timeout = 0 if $timeout < 0;
  for my $fh ($sel->can_read($timeout)) {
    if ($fh == $listener) {
      my $s = $listener->accept or next;
      $conns{ fileno($s) } = { smpp => $s, bound => 0, receipts => {} };
      $sel->add($s);
    }
    elsif ($fh == \*STDIN) {
      my $n = sysread(STDIN, $stdin_buf, 65536, length $stdin_buf);
      if (!$n) { $sel->remove(\*STDIN); next; }
      while ($stdin_buf =~ s/^([^\n]*)\n//) { command($1) }
    }
    else {
      my $c = $conns{ fileno($fh) } or next;
      my $pdu = $fh->read_pdu();
      if (!$pdu) { close_conn($c); next; }
      on_pdu($c, $pdu);
    }
  }
  while (@timers && $timers[0][0] <= time) { my $t = shift @timers; $t->[1]->(); }
}
