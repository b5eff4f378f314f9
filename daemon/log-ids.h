/*
 * log-ids: the journal MESSAGE_ID of each kind of event xenreaperd logs,
 * made once with `systemd-id128 new`.  Log pipelines and alerts filter on
 * them: never change one, and give a new kind of event a new id.
 * config/xenreaper.catalog explains each to the admin (journalctl -x);
 * tests/unit/test-catalog.sh checks that the two name the same ids.
 */
#pragma once

#define XR_MESSAGE_ACCEPTED      "6c6e9e07f708422c82e40d599fda641a"	/* a teardown queued */
#define XR_MESSAGE_STARTED       "aea0afedc522408188d5ca3363bd8986"	/* its destroy began */
#define XR_MESSAGE_RELEASED      "2ac89d91a9484a44be4a7621a6dd9dde"	/* pages back: the rate line */
#define XR_MESSAGE_DONE          "0db490eeee4841daa5b81575e33bf9a3"	/* the job ended done */
#define XR_MESSAGE_ZOMBIE        "6b220fde259c4d5999da39e9c5d63567"	/* dead, pages still held */
#define XR_MESSAGE_ORPHAN        "1c59d893ae514e38824a847149212672"	/* adopted as an orphan */
#define XR_MESSAGE_STUCK         "ede1365527864268aef3abf12e309309"	/* its destroy stands still */
#define XR_MESSAGE_UNSTUCK       "f2e460b2515a4f0788a6f251219c08b7"	/* a stuck destroy moved again */
#define XR_MESSAGE_FAILED        "4ee5e7aa9c544f4e9892d36671ca8690"	/* the job ended failed */
#define XR_MESSAGE_SCRUB_GAVE_UP "2d0e28c5d2db4b8ba1e92fd078a5bb26"	/* scrub backlog unmeasurable */
#define XR_MESSAGE_RELOADED      "36e6a31e98cf4184956d6046d74052a4"	/* a new policy in effect */
#define XR_MESSAGE_RELOAD_FAILED "8f5696a2989e483c8e677576cbd7177b"	/* a bad policy file kept out */
