import { ExactEvmScheme } from '@x402/evm/exact/client';
import { getAddress, type Hex, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { LOCAL_NETWORK, localExactRequirement } from '../../../test/fixtures/local-network.ts';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../platform/chain/token.ts';
import { agentSigner } from './signer.ts';

// The agent's signer must sign exactly what the account's own signTypedData signs (RFC 6979
// signatures are deterministic, so the bytes are equal), and only after its countersign resolved.

const network = LOCAL_NETWORK;

const types = TRANSFER_WITH_AUTHORIZATION_TYPES;

function typedData(from: Hex, domain: Record<string, unknown>, value: bigint, nonce: Hex) {
  return {
    domain,
    types,
    primaryType: 'TransferWithAuthorization',
    message: {
      from,
      to: getAddress('0x70997970c51812dc3a010c7d01b50e0d17dc79c8'),
      value,
      validAfter: 0n,
      validBefore: 1_900_000_000n,
      nonce,
    },
  };
}

const tokenDomain = {
  name: network.token.name,
  version: network.token.version,
  chainId: network.chainId,
  verifyingContract: network.token.address,
};

function randomNonce(): Hex {
  return `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`;
}

describe('agentSigner', () => {
  it('signs the token domain exactly as the account does, for many keys and messages', async () => {
    for (let index = 0; index < 12; index++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const signer = agentSigner(account, undefined);
      const typed = typedData(account.address, tokenDomain, BigInt(index * 1_000_003 + 1), randomNonce());
      const ours = await signer.signTypedData(typed);
      expect(ours).toBe(await account.signTypedData(typed as never));
      expect(await recoverTypedDataAddress({ ...typed, signature: ours } as never)).toBe(account.address);
    }
  });

  it('signs any other domain as the account does', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const signer = agentSigner(account, undefined);
    const others = [
      { ...tokenDomain, name: 'Not the token' },
      { ...tokenDomain, version: '1' },
      { ...tokenDomain, chainId: 8453 },
      { ...tokenDomain, verifyingContract: getAddress('0x036cbd53842c5426634e7929541ec2318f3dcf7e') },
      { ...tokenDomain, salt: `0x${'00'.repeat(31)}01` },
    ];
    for (const domain of others) {
      const typed = typedData(account.address, domain, 5n, randomNonce());
      expect(await signer.signTypedData(typed)).toBe(await account.signTypedData(typed as never));
    }
  });

  it('refuses what the account refuses: a value that is no uint256, a nonce that is no bytes32', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const signer = agentSigner(account, undefined);
    const tooBig = typedData(account.address, tokenDomain, 2n ** 256n, randomNonce());
    await expect(signer.signTypedData(tooBig)).rejects.toThrow();
    await expect(account.signTypedData(tooBig as never)).rejects.toThrow();
    const longNonce = typedData(account.address, tokenDomain, 1n, `0x${'11'.repeat(33)}`);
    await expect(signer.signTypedData(longNonce)).rejects.toThrow();
    await expect(account.signTypedData(longNonce as never)).rejects.toThrow();
  });

  it('signs only once the countersign resolved, and not at all when it rejects', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const typed = typedData(account.address, tokenDomain, 3n, randomNonce());
    const order: string[] = [];
    let release!: () => void;
    const recorded = new Promise<void>((resolve) => {
      release = resolve;
    });
    const signer = agentSigner(account, undefined, async () => {
      order.push('countersign asked');
      await recorded;
      order.push('countersign resolved');
    });
    const signing = signer.signTypedData(typed).then((signature) => {
      order.push('signed');
      return signature;
    });
    await Promise.resolve();
    expect(order).toEqual(['countersign asked']);
    release();
    expect(await signing).toBe(await account.signTypedData(typed as never));
    expect(order).toEqual(['countersign asked', 'countersign resolved', 'signed']);

    const refusing = agentSigner(account, undefined, async () => {
      throw new Error('the fence refused');
    });
    await expect(refusing.signTypedData(typed)).rejects.toThrow('the fence refused');
  });

  it('is what the official exact scheme signs an x402 payment with', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const scheme = new ExactEvmScheme(agentSigner(account, undefined));
    const requirements = localExactRequirement();
    const created = await scheme.createPaymentPayload(2, requirements);
    const { authorization, signature } = created.payload as {
      authorization: Record<string, string>;
      signature: Hex;
    };
    const recovered = await recoverTypedDataAddress({
      domain: tokenDomain,
      types,
      primaryType: 'TransferWithAuthorization',
      message: {
        from: authorization.from as Hex,
        to: authorization.to as Hex,
        value: BigInt(authorization.value!),
        validAfter: BigInt(authorization.validAfter!),
        validBefore: BigInt(authorization.validBefore!),
        nonce: authorization.nonce as Hex,
      },
      signature,
    });
    expect(recovered).toBe(account.address);
  });
});
