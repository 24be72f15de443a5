import { getAddress, isAddress, verifyMessage } from 'viem';

/**
 * Whether `signature` is an EIP-191 personal_sign of `message` by `address` (an EOA). viem does
 * the recovery; a malformed signature is simply not a signature by anyone.
 */
export async function isPersonalSignatureBy(
  address: string,
  message: string,
  signature: string,
): Promise<boolean> {
  if (!isAddress(address, { strict: false }) || !/^0x[0-9a-fA-F]{130}$/.test(signature)) return false;
  try {
    return await verifyMessage({
      address: getAddress(address),
      message,
      signature: signature as `0x${string}`,
    });
  } catch {
    return false;
  }
}
