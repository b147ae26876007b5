/**
 * Passkeys (WebAuthn) in the browser: the server's options JSON (from @simplewebauthn/server)
 * turned into the ArrayBuffers `navigator.credentials` takes, and the credential it returns turned
 * back into the JSON the server verifies. This is what @simplewebauthn/browser's startRegistration
 * and startAuthentication do; the console does it itself with that package's base64url helpers
 * because those two functions carry a warning that names another host, which the console's build
 * must not (test/console/console-build.test.ts).
 */
import {
  base64URLStringToBuffer,
  bufferToBase64URLString,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialDescriptorJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/browser';

/** True when this browser can use passkeys at all. */
export function passkeysSupported(): boolean {
  return typeof window.PublicKeyCredential === 'function' && typeof navigator.credentials?.get === 'function';
}

function descriptor(d: PublicKeyCredentialDescriptorJSON): PublicKeyCredentialDescriptor {
  return {
    type: d.type,
    id: base64URLStringToBuffer(d.id),
    ...(d.transports ? { transports: d.transports as AuthenticatorTransport[] } : {}),
  };
}

function attachment(value: string | null): 'platform' | 'cross-platform' | undefined {
  return value === 'platform' || value === 'cross-platform' ? value : undefined;
}

/** Creates a passkey with `options` (POST /console/api/passkeys/options) and returns the JSON for POST /console/api/passkeys. */
export async function createPasskey(options: PublicKeyCredentialCreationOptionsJSON): Promise<RegistrationResponseJSON> {
  const publicKey: PublicKeyCredentialCreationOptions = {
    ...(options as unknown as PublicKeyCredentialCreationOptions),
    challenge: base64URLStringToBuffer(options.challenge),
    user: { ...options.user, id: base64URLStringToBuffer(options.user.id) },
    excludeCredentials: (options.excludeCredentials ?? []).map(descriptor),
  };
  const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential | null;
  if (credential === null) throw new Error('No passkey was created.');
  const response = credential.response as AuthenticatorAttestationResponse;
  const transports =
    typeof response.getTransports === 'function' ? (response.getTransports() as AuthenticatorTransportFuture[]) : undefined;
  const publicKeyAlgorithm = typeof response.getPublicKeyAlgorithm === 'function' ? response.getPublicKeyAlgorithm() : undefined;
  const key = typeof response.getPublicKey === 'function' ? response.getPublicKey() : null;
  const authenticatorData = typeof response.getAuthenticatorData === 'function' ? response.getAuthenticatorData() : undefined;
  return {
    id: credential.id,
    rawId: bufferToBase64URLString(credential.rawId),
    response: {
      attestationObject: bufferToBase64URLString(response.attestationObject),
      clientDataJSON: bufferToBase64URLString(response.clientDataJSON),
      ...(transports ? { transports } : {}),
      ...(publicKeyAlgorithm !== undefined ? { publicKeyAlgorithm } : {}),
      ...(key ? { publicKey: bufferToBase64URLString(key) } : {}),
      ...(authenticatorData ? { authenticatorData: bufferToBase64URLString(authenticatorData) } : {}),
    },
    type: 'public-key',
    clientExtensionResults: credential.getClientExtensionResults(),
    authenticatorAttachment: attachment(credential.authenticatorAttachment),
  };
}

/** Asks the browser for a passkey with `options` (POST /console/api/passkeys/sign-in) and returns the JSON for POST /console/api/session. */
export async function requestPasskey(options: PublicKeyCredentialRequestOptionsJSON): Promise<AuthenticationResponseJSON> {
  const allow = options.allowCredentials ?? [];
  const publicKey: PublicKeyCredentialRequestOptions = {
    ...(options as unknown as PublicKeyCredentialRequestOptions),
    challenge: base64URLStringToBuffer(options.challenge),
    // An empty list would refuse every passkey: without one, the browser offers those of this site.
    allowCredentials: allow.length === 0 ? undefined : allow.map(descriptor),
  };
  const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential | null;
  if (credential === null) throw new Error('No passkey was chosen.');
  const response = credential.response as AuthenticatorAssertionResponse;
  return {
    id: credential.id,
    rawId: bufferToBase64URLString(credential.rawId),
    response: {
      authenticatorData: bufferToBase64URLString(response.authenticatorData),
      clientDataJSON: bufferToBase64URLString(response.clientDataJSON),
      signature: bufferToBase64URLString(response.signature),
      ...(response.userHandle ? { userHandle: bufferToBase64URLString(response.userHandle) } : {}),
    },
    type: 'public-key',
    clientExtensionResults: credential.getClientExtensionResults(),
    authenticatorAttachment: attachment(credential.authenticatorAttachment),
  };
}
